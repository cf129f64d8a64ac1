#!/usr/bin/python3
"""Issue #24 point 3, detection: torchvision 0.14's detection models with
random weights (fixed seeds, BatchNorm statistics randomized as in
make_zoo.py), eval mode, exported by torch.onnx at opset 11 and at 17 (the
highest torch 1.13 offers) with input "x" of shape [1, 3, height, width]
(height and width dynamic). The score thresholds are lowered and the number
of detections capped so that random weights give a non-empty, deterministic
output. Generated, never committed.

For each model, opset and shape k it writes OUTDIR/NAME.opOPSET.onnx,
OUTDIR/NAME.<k>.input.npy and OUTDIR/NAME.<k>.OUTPUT.npy (PyTorch's outputs:
boxes, scores, labels, and masks or keypoints and keypoints_scores), and
OUTDIR/detection.txt with one line per (model, opset, shape):

    NAME.opOPSET MODEL.onnx --input x=... --expect boxes=... ... [--rtol X --atol X]

The words after the first are `disco run`'s arguments, relative to OUTDIR.

--traced-nms also exports NAME.opOPSET.traced-nms.onnx (lines named
NAME.opOPSET.traced-nms), a diagnostic variant: torchvision's batched_nms,
which torch.onnx scripts into an If (no boxes: an empty result; else the NMS),
traced without that If, as torchvision traces it when there are boxes. The
references are the same PyTorch outputs.

usage: benchmarks/make_detection.py OUTDIR [--only NAME ...] [--opsets 11 17] [--traced-nms] [--keep] [--list]
"""
import contextlib
import argparse
import os
import sys
import warnings
import zlib

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_zoo import randomize  # noqa: E402
import torchvision_roi_align_onnx  # noqa: E402

# torchvision 0.14 exports RoiAlign without coordinate_transformation_mode, which from opset 16
# means aligned=True; state aligned=False (see torchvision_roi_align_onnx.py).
torchvision_roi_align_onnx.register()

SHAPES = [(1, 3, 320, 320), (1, 3, 256, 384), (1, 3, 384, 288)]
OPSETS = [11, 17]


def configure(model, name):
    """Low thresholds and few detections, so that random weights detect something."""
    if hasattr(model, "roi_heads"):  # Faster/Mask/Keypoint R-CNN
        model.roi_heads.score_thresh = 0.01
        model.roi_heads.detections_per_img = 20
    else:  # SSD, RetinaNet
        model.score_thresh = 0.01
        model.detections_per_img = 20
    return model


def builder(name):
    from torchvision.models import detection
    return getattr(detection, name)(weights=None, weights_backbone=None)


MODELS = {
    "fasterrcnn_mobilenet_v3_large_320_fpn": ["boxes", "scores", "labels"],
    "ssdlite320_mobilenet_v3_large": ["boxes", "scores", "labels"],
    "retinanet_resnet50_fpn": ["boxes", "scores", "labels"],
    "maskrcnn_resnet50_fpn": ["boxes", "scores", "labels", "masks"],
    "keypointrcnn_resnet50_fpn": ["boxes", "scores", "labels", "keypoints", "keypoints_scores"],
}


class FirstImage(nn.Module):
    """[1, 3, H, W] -> the detections of the one image, as a tuple."""

    def __init__(self, model, outputs):
        super().__init__()
        self.model, self.outputs = model, outputs

    def forward(self, x):
        d = self.model([x[0]])[0]
        return tuple(d[o] for o in self.outputs)


@contextlib.contextmanager
def traced_nms():
    """torchvision.ops.boxes' coordinate-trick batched NMS without its
    `boxes.numel() == 0` early return, a plain function, so the tracer records
    the NMS branch and no If."""
    from torchvision.ops import boxes

    def coordinate_trick(b, scores, idxs, iou_threshold):
        offsets = idxs.to(b) * (b.max() + torch.tensor(1).to(b))
        return boxes.nms(b + offsets[:, None], scores, iou_threshold)

    saved = boxes._batched_nms_coordinate_trick
    boxes._batched_nms_coordinate_trick = coordinate_trick
    try:
        yield
    finally:
        boxes._batched_nms_coordinate_trick = saved


def build(name, outdir, opsets, traced=False):
    outputs = MODELS[name]
    torch.manual_seed(zlib.crc32(name.encode()))
    model = FirstImage(configure(randomize(builder(name)), name), outputs).eval()
    torch.manual_seed(1)
    inputs = [torch.rand(*s) for s in SHAPES]
    with torch.no_grad():
        for k, x in enumerate(inputs, 1):
            np.save(os.path.join(outdir, f"{name}.{k}.input.npy"), x.numpy())
            for o, y in zip(outputs, model(x)):
                np.save(os.path.join(outdir, f"{name}.{k}.{o}.npy"), y.numpy())
    axes = {"x": {2: "height", 3: "width"}}
    for o in outputs:
        axes[o] = {0: "detections"}
    for opset in opsets:
        for variant in ["", ".traced-nms"] if traced else [""]:
            with warnings.catch_warnings(), torch.no_grad(), traced_nms() if variant else contextlib.nullcontext():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, inputs[0], os.path.join(outdir, f"{name}.op{opset}{variant}.onnx"),
                                  opset_version=opset, input_names=["x"], output_names=outputs, dynamic_axes=axes)


def lines(name, opsets, traced=False):
    out = []
    for opset in opsets:
        for variant in ["", ".traced-nms"] if traced else [""]:
            model = f"{name}.op{opset}{variant}"
            for k in range(1, len(SHAPES) + 1):
                expects = " ".join(f"--expect {o}={name}.{k}.{o}.npy" for o in MODELS[name])
                out.append(f"{model} {model}.onnx --input x={name}.{k}.input.npy {expects} --rtol 1e-3 --atol 1e-3")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=list(MODELS))
    ap.add_argument("--opsets", nargs="+", type=int, default=OPSETS)
    ap.add_argument("--traced-nms", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    os.makedirs(a.outdir, exist_ok=True)
    all_lines, failed = [], 0
    for name in a.only or MODELS:
        there = all(os.path.exists(os.path.join(a.outdir, f"{name}.op{o}{v}.onnx")) for o in a.opsets
                    for v in (["", ".traced-nms"] if a.traced_nms else [""]))
        if not (a.keep and there):
            print(f"make_detection: {name}", file=sys.stderr, flush=True)
            try:
                build(name, a.outdir, a.opsets, a.traced_nms)
            except Exception as e:
                failed += 1
                error = " ".join(f"{type(e).__name__}: {e}".split())
                print(f"make_detection: {name} failed: {error}", file=sys.stderr, flush=True)
                all_lines.append(f"# {name}: export failed: {error}")
                continue
        all_lines += lines(name, a.opsets, a.traced_nms)
    with open(os.path.join(a.outdir, "detection.txt"), "w") as f:
        f.write("# made by benchmarks/make_detection.py; one line per (model, opset, shape)\n")
        f.write("\n".join(all_lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
