#!/usr/bin/python3
"""Issue #24's torchvision zoo: every torchvision 0.14 classification and
segmentation model (torchvision.models.list_models), random weights (make_zoo.py's
randomize(), a seed per model), exported by torch.onnx at opset 11 and at
opset 17 (the highest torch 1.13 offers) with a dynamic batch, plus a dynamic
height and width where the model takes any size, and PyTorch's outputs
(eval mode) at 2 input sizes. Generated, never committed.

Writes, for each model NAME and input size k = 1, 2:
    OUTDIR/opset<N>/NAME.onnx         (input "x", output "y")
    OUTDIR/opset<N>/NAME/NAME.onnx    instead, for the models over protobuf's 2 GB (EXTERNAL_DATA),
                                      whose weights torch.onnx writes to files beside the model
    OUTDIR/NAME.<k>.input.npy, OUTDIR/NAME.<k>.output.npy
and appends to OUTDIR/cells.txt one line per cell, tab-separated:
    NAME  OPSET  SHAPE  run     MODEL  INPUT  EXPECT       (paths relative to OUTDIR)
    NAME  OPSET  -      export  MESSAGE                    (torch.onnx failed: not disco's failure)
    NAME  -      -      skip    REASON                     (not run, e.g. ONNX file too large)
benchmarks/tv_zoo_check.sh runs the "run" lines with `disco run` and writes the table.

usage: benchmarks/make_tv_zoo.py OUTDIR [--only NAME ...] [--first | --rest] [--opsets 11 17] [--keep] [--list]
  --first    the one-model-per-family set only; --rest: every other model
  --keep     reuse a model's files when they are all there already
"""
import argparse
import os
import sys
import warnings
import zlib

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_zoo import SegmentationOut, randomize  # noqa: E402  (the speed sweep's generator)
import torchvision_zero_onnx  # noqa: E402  (aten::zero, which swin_v2 needs and torch 1.13 cannot export)

OPSETS = [11, 17]
# float32 weights above this: not run. Every torchvision 0.14 model is under it (regnet_y_128gf, the largest,
# has 2.6 GB); it stays as a guard for a machine that cannot hold the export.
MAX_ONNX_BYTES = 3e9
# Over protobuf's 2 GB: torch.onnx writes these with external data, one file per weight named after it, beside
# the .onnx. Each gets a folder of its own so that two models' "conv.weight" files cannot clash.
EXTERNAL_DATA = ["vit_h_14", "regnet_y_128gf"]
PROTOBUF_LIMIT = 2 ** 31

# One model per family, covered first (issue #24's brief); the rest follow.
FIRST = ["resnet18", "resnet50", "resnext50_32x4d", "wide_resnet50_2", "vgg11", "vgg11_bn", "alexnet",
         "squeezenet1_0", "squeezenet1_1", "densenet121", "inception_v3", "googlenet", "mobilenet_v2",
         "mobilenet_v3_small", "mobilenet_v3_large", "mnasnet0_5", "shufflenet_v2_x0_5", "efficientnet_b0",
         "efficientnet_v2_s", "regnet_x_400mf", "regnet_y_400mf", "convnext_tiny", "vit_b_16", "swin_t", "maxvit_t",
         "fcn_resnet50", "deeplabv3_mobilenet_v3_large", "deeplabv3_resnet50", "lraspp_mobilenet_v3_large"]

# The others, smallest first (torchvision's documented parameter counts), so that a run cut short
# covers the most models; any model list_models() gives that is missing here comes last.
REST_BY_SIZE = ["mnasnet0_75", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "mnasnet1_0", "regnet_x_800mf",
                "regnet_y_800mf", "mnasnet1_3", "efficientnet_b1", "shufflenet_v2_x2_0", "regnet_x_1_6gf",
                "efficientnet_b2", "regnet_y_1_6gf", "densenet169", "efficientnet_b3", "regnet_x_3_2gf",
                "densenet201", "regnet_y_3_2gf", "resnet34", "efficientnet_b4", "densenet161", "vit_b_32",
                "swin_v2_t", "resnet101", "convnext_small", "swin_s", "swin_v2_s", "efficientnet_b5",
                "deeplabv3_resnet101", "fcn_resnet101", "regnet_x_8gf", "regnet_y_8gf", "efficientnet_b6",
                "efficientnet_v2_m", "resnet152", "efficientnet_b7", "resnext101_64x4d", "resnext101_32x8d",
                "swin_b", "swin_v2_b", "convnext_base", "regnet_y_16gf", "regnet_x_16gf", "regnet_x_32gf",
                "efficientnet_v2_l", "wide_resnet101_2", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19",
                "vgg19_bn", "regnet_y_32gf", "convnext_large", "vit_b_16", "vit_l_32", "vit_l_16", "vit_h_14",
                "regnet_y_128gf"]

ANY_SIZE = [(1, 3, 224, 224), (2, 3, 160, 160)]
FIXED_SIZE = [(1, 3, 224, 224), (2, 3, 224, 224)]
CNN_AXES = {0: "batch", 2: "height", 3: "width"}
BATCH_AXES = {0: "batch"}


def segmentation_names():
    from torchvision.models import list_models, segmentation
    return list_models(module=segmentation)


def all_names():
    from torchvision import models
    names = models.list_models(module=models) + segmentation_names()
    rest = [n for n in REST_BY_SIZE if n in names] + [n for n in names if n not in REST_BY_SIZE]
    return FIRST + [n for n in rest if n not in FIRST]


def sizes_and_axes(name):
    """(input shapes, dynamic axes of x, dynamic axes of y). vit, swin and maxvit
    are built for 224x224 (position embeddings, window partitions, maxvit's
    fixed grid), as the brief says; alexnet and vgg end in AdaptiveAvgPool2d((6, 6))
    / ((7, 7)), which torch.onnx exports as an AveragePool whose kernel is fixed
    by the traced size, so their height and width cannot be dynamic either;
    inception_v3 is made for 299x299."""
    if name in segmentation_names():
        return ANY_SIZE, CNN_AXES, CNN_AXES
    if name.startswith(("vit_", "swin_", "maxvit_", "vgg", "alexnet")):
        return FIXED_SIZE, BATCH_AXES, BATCH_AXES
    if name == "inception_v3":
        return [(1, 3, 299, 299), (2, 3, 160, 160)], CNN_AXES, BATCH_AXES
    return ANY_SIZE, CNN_AXES, BATCH_AXES


def build_model(name):
    from torchvision import models
    from torchvision.models import segmentation
    if name in segmentation_names():
        return SegmentationOut(getattr(segmentation, name)(weights=None, weights_backbone=None))
    if name == "inception_v3":
        # Its legacy init (truncated normal, std 0.1) makes outputs of about 1e13 with random weights;
        # PyTorch's default init keeps them near 1, as a trained model's.
        return models.inception_v3(weights=None, init_weights=False)
    return getattr(models, name)(weights=None)


def randomize_layer_scale(model):
    """convnext's layer scale starts at 1e-6, which makes each block the identity
    to the checks' tolerance; scale it up as trained weights are."""
    from torchvision.models.convnext import CNBlock
    for m in model.modules():
        if isinstance(m, CNBlock):
            m.layer_scale.data.uniform_(0.1, 0.3)
    return model


def shape_str(s):
    return "x".join(map(str, s))


def one_line(e):
    return " ".join(f"{type(e).__name__}: {e}".split())[:600]


def onnx_path(name, opset):
    """The model's file, relative to OUTDIR."""
    if name in EXTERNAL_DATA:
        return os.path.join(f"opset{opset}", name, f"{name}.onnx")
    return os.path.join(f"opset{opset}", f"{name}.onnx")


def model_files(outdir, name, shapes, opsets):
    return ([os.path.join(outdir, onnx_path(name, o)) for o in opsets] +
            [os.path.join(outdir, f"{name}.{k}.{io}.npy") for k in range(1, len(shapes) + 1) for io in ("input", "output")])


def make(name, outdir, opsets, keep):
    """Returns the cells.txt lines of one model."""
    shapes, x_axes, y_axes = sizes_and_axes(name)
    errors = {}
    have = keep and all(os.path.exists(f) for f in model_files(outdir, name, shapes, opsets))
    done_marker = os.path.join(outdir, f"{name}.cells")
    if have and os.path.exists(done_marker):
        with open(done_marker) as f:
            return f.read().splitlines()
    torch.manual_seed(zlib.crc32(name.encode()))
    model = build_model(name)
    size = 4 * sum(p.numel() for p in model.parameters())
    if size > 0.9 * PROTOBUF_LIMIT and name not in EXTERNAL_DATA:
        raise RuntimeError(f"{name}: {size / 1e6:.0f} MB of weights may need external data: add it to EXTERNAL_DATA")
    if size > MAX_ONNX_BYTES:
        lines = [f"{name}\t-\t-\tskip\tONNX file would be {size / 1e6:.0f} MB (over {MAX_ONNX_BYTES / 1e6:.0f} MB)"]
    else:
        model = randomize_layer_scale(randomize(model)).eval()
        inputs = [torch.randn(*s) for s in shapes]
        with torch.no_grad():
            for k, x in enumerate(inputs, 1):
                np.save(os.path.join(outdir, f"{name}.{k}.input.npy"), x.numpy())
                np.save(os.path.join(outdir, f"{name}.{k}.output.npy"), model(x).numpy())
        for opset in opsets:
            path = os.path.join(outdir, onnx_path(name, opset))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # Exported with grad enabled: under no_grad, eval-mode nn.MultiheadAttention (vit) takes
            # its fused fast path, aten::_native_multi_head_attention, which torch 1.13 cannot export.
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(model, inputs[0], path, opset_version=opset, input_names=["x"],
                                      output_names=["y"], dynamic_axes={"x": x_axes, "y": y_axes})
            except Exception as e:  # torch.onnx's failure, recorded as such; the other opset goes on
                errors[opset] = one_line(e)
                print(f"make_tv_zoo: {name} opset {opset}: export failed: {errors[opset]}", file=sys.stderr)
        lines = []
        for opset in opsets:
            if opset in errors:
                lines.append(f"{name}\t{opset}\t-\texport\t{errors[opset]}")
                continue
            for k, s in enumerate(shapes, 1):
                lines.append(f"{name}\t{opset}\t{shape_str(s)}\trun\t{onnx_path(name, opset)}\t"
                             f"{name}.{k}.input.npy\t{name}.{k}.output.npy")
    with open(done_marker, "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--first", action="store_true")
    group.add_argument("--rest", action="store_true")
    ap.add_argument("--opsets", nargs="+", type=int, default=OPSETS)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    names = all_names()
    if a.only:
        unknown = [n for n in a.only if n not in names]
        if unknown:
            ap.error(f"not a torchvision classification or segmentation model: {' '.join(unknown)}")
        names = a.only
    elif a.first:
        names = [n for n in FIRST if n in names]
    elif a.rest:
        names = [n for n in names if n not in FIRST]
    if a.list:
        print("\n".join(names))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    for opset in a.opsets:
        os.makedirs(os.path.join(a.outdir, f"opset{opset}"), exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    torchvision_zero_onnx.register()
    for name in names:
        print(f"make_tv_zoo: {name}", file=sys.stderr, flush=True)
        try:
            lines = make(name, a.outdir, a.opsets, a.keep)
        except Exception as e:  # the model itself failed in PyTorch: recorded, the others go on
            lines = [f"{name}\t-\t-\tskip\tPyTorch failed: {one_line(e)}"]
        with open(os.path.join(a.outdir, "cells.txt"), "a") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
