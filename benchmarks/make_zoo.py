#!/usr/bin/python3
"""The model zoo of issue #21's broad sweep: torchvision 0.14 models and
transformer and recurrent blocks written here, with random weights (fixed
seeds), exported by torch.onnx (opset 17) with a dynamic batch, plus dynamic
height and width for the CNNs and segmentation models (not vit_b_16, which
takes 224x224 only) and a dynamic sequence for the blocks and taggers.
Generated, never committed.

For each model's sweep shapes k = 1, 2, ... it writes OUTDIR/NAME.<k>.input.npy
(input "x") and OUTDIR/NAME.<k>.output.npy (output "y", PyTorch in eval mode),
and OUTDIR/zoo.txt, which lists one line per (model, shape) for
`harness --sweep` (and a comment with the error for a model that failed to export):

    NAME MODEL.onnx --input x=NAME.<k>.input.npy --expect y=NAME.<k>.output.npy [--rtol X] [--atol X]

The words after NAME are `disco run`'s arguments, paths relative to OUTDIR, so
`cd OUTDIR && disco run <the line without NAME>` checks one cell by hand.

usage: benchmarks/make_zoo.py OUTDIR [--unseen] [--only NAME ...] [--keep] [--list]
  --unseen         the unseen list instead: torchvision models outside the zoo
                   (not tuned for, not part of #21's bar), to check that what
                   holds on the zoo holds off it too
  --only NAME ...  these models only (zoo.txt then lists only them)
  --keep           reuse a model's files when they are all there already
  --list           print the model names and exit
"""
import argparse
import math
import os
import sys
import warnings
import zlib

import numpy as np
import torch
from torch import nn

CNN_SHAPES = [(1, 3, 224, 224), (2, 3, 160, 160)]
BLOCK_SEQS = [(1, 128), (2, 77), (4, 64)]  # (batch, seq) of the transformer blocks
TAGGER_SEQS = [(1, 50), (4, 32), (8, 100)]
OPSET = 17


def randomize(model):
    """Weights as a trained model's would look to the checks: BatchNorm
    statistics and affine parameters away from the identity (a wrongly folded
    BatchNormalization shows in the outputs), the last BatchNorm of each ResNet
    block small, as trained ResNets have them (with torchvision's init the
    activations of resnet50 and fcn_resnet50 grow to the hundreds, where float
    rounding alone exceeds atol 1e-4), and no zero-initialized layer (vit_b_16's
    head: its output would be all zeros)."""
    from torchvision.models.resnet import BasicBlock, Bottleneck
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
            if m.affine:
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.normal_(0, 0.1)
        elif isinstance(m, (nn.Linear, nn.Conv2d)) and not m.weight.any():
            nn.init.normal_(m.weight, std=0.02)
    for m in model.modules():
        last_bn = m.bn3 if isinstance(m, Bottleneck) else m.bn2 if isinstance(m, BasicBlock) else None
        if last_bn is not None:
            last_bn.weight.data.uniform_(0.1, 0.3)
    return model


# --- transformer blocks -----------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def split_heads(z, heads):  # [b, t, d] -> [b, heads, t, d / heads]
    b, t, d = z.shape
    return z.reshape(b, t, heads, d // heads).transpose(1, 2)


def merge_heads(z):  # [b, heads, t, hd] -> [b, t, heads * hd]
    b, h, t, hd = z.shape
    return z.transpose(1, 2).reshape(b, t, h * hd)


def causal_mask(scores):
    t = scores.shape[-1]
    future = torch.triu(torch.ones(t, t, dtype=torch.bool, device=scores.device), 1)
    return torch.where(future, torch.tensor(torch.finfo(scores.dtype).min), scores)


class GPT2Block(nn.Module):
    """Pre-LayerNorm, fused qkv Linear, causal self-attention, tanh GELU MLP."""

    def __init__(self, d=768, heads=12):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        q, k, v = (split_heads(z, self.heads) for z in self.qkv(self.ln1(x)).split(x.shape[-1], dim=2))
        scores = causal_mask(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
        x = x + self.proj(merge_heads(scores.softmax(-1) @ v))
        return x + self.mlp(self.ln2(x))


class T5Block(nn.Module):
    """T5 encoder layer: RMSNorm, attention with a bucketed relative position
    bias (bidirectional buckets, as T5), no score scaling, ReLU FFN."""

    def __init__(self, d=512, heads=8, ff=2048, buckets=32, max_distance=128):
        super().__init__()
        self.heads, self.buckets, self.max_distance = heads, buckets, max_distance
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.relative_bias = nn.Embedding(buckets, heads)
        self.wi, self.wo = nn.Linear(d, ff, bias=False), nn.Linear(ff, d, bias=False)

    def bucket(self, relative):
        half = self.buckets // 2
        exact = half // 2
        n = relative.abs()
        far = exact + (torch.log(n.float() / exact) / math.log(self.max_distance / exact) * (half - exact)).long()
        far = torch.min(far, torch.full_like(far, half - 1))
        return (relative > 0).long() * half + torch.where(n < exact, n, far)

    def forward(self, x):
        pos = torch.arange(x.shape[1], device=x.device)
        bias = self.relative_bias(self.bucket(pos[None, :] - pos[:, None])).permute(2, 0, 1).unsqueeze(0)
        h = self.norm1(x)
        q, k, v = (split_heads(f(h), self.heads) for f in (self.q, self.k, self.v))
        x = x + self.o(merge_heads((q @ k.transpose(-2, -1) + bias).softmax(-1) @ v))
        return x + self.wo(torch.relu(self.wi(self.norm2(x))))


class LlamaBlock(nn.Module):
    """RMSNorm, causal attention with rotary embeddings (cos and sin computed
    in the graph from the positions), SiLU-gated MLP."""

    def __init__(self, d=768, heads=12, hidden=2048):
        super().__init__()
        self.heads = heads
        hd = d // heads
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd)))
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    @staticmethod
    def rotate_half(z):
        half = z.shape[-1] // 2
        return torch.cat([-z[..., half:], z[..., :half]], -1)

    def forward(self, x):
        freqs = torch.arange(x.shape[1], device=x.device).float()[:, None] * self.inv_freq[None, :]
        angles = torch.cat([freqs, freqs], -1)
        cos, sin = angles.cos(), angles.sin()
        h = self.norm1(x)
        q, k, v = (split_heads(f(h), self.heads) for f in (self.q, self.k, self.v))
        q, k = (z * cos + self.rotate_half(z) * sin for z in (q, k))
        scores = causal_mask(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
        x = x + self.o(merge_heads(scores.softmax(-1) @ v))
        h = self.norm2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class ConformerBlock(nn.Module):
    """Half FFN, self-attention, convolution module (pointwise conv, GLU,
    depthwise conv1d, BatchNorm, SiLU, pointwise conv), half FFN, LayerNorm."""

    def __init__(self, d=512, heads=8, ff=2048, kernel=31):
        super().__init__()
        self.heads = heads

        def ffn():
            return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, ff), nn.SiLU(), nn.Linear(ff, d))

        self.ff1, self.ff2 = ffn(), ffn()
        self.ln_att, self.ln_conv, self.ln_out = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.conv = nn.Sequential(nn.Conv1d(d, 2 * d, 1), nn.GLU(dim=1),
                                  nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d), nn.BatchNorm1d(d),
                                  nn.SiLU(), nn.Conv1d(d, d, 1))

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        q, k, v = (split_heads(z, self.heads) for z in self.qkv(self.ln_att(x)).split(x.shape[-1], dim=2))
        x = x + self.proj(merge_heads((q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(-1) @ v))
        x = x + self.conv(self.ln_conv(x).transpose(1, 2)).transpose(1, 2)
        return self.ln_out(x + 0.5 * self.ff2(x))


class Tagger(nn.Module):
    """[batch, seq, feat] -> two bidirectional recurrent layers -> Linear per step."""

    def __init__(self, cell, feat=128, hidden=256, tags=32):
        super().__init__()
        self.rnn = cell(feat, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, x):
        return self.out(self.rnn(x)[0])


# --- the zoo ----------------------------------------------------------------

class SegmentationOut(nn.Module):
    """torchvision's segmentation models return a dict; the sweep takes "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def torchvision_model(name):
    from torchvision import models
    from torchvision.models import segmentation
    if hasattr(segmentation, name):
        return SegmentationOut(getattr(segmentation, name)(weights=None, weights_backbone=None))
    return getattr(models, name)(weights=None)


CNN_AXES = {0: "batch", 2: "height", 3: "width"}
SEQ_AXES = {0: "batch", 1: "seq"}

# name -> (builder, input shapes, dynamic axes of x and y)
ZOO = {}
for _name in ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "regnet_y_400mf",
              "convnext_tiny", "squeezenet1_1", "shufflenet_v2_x1_0"]:
    ZOO[_name] = (lambda n=_name: torchvision_model(n), CNN_SHAPES, CNN_AXES, {0: "batch"})
ZOO["vit_b_16"] = (lambda: torchvision_model("vit_b_16"), [(1, 3, 224, 224), (2, 3, 224, 224)], {0: "batch"},
                   {0: "batch"})
for _name in ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]:
    ZOO[_name] = (lambda n=_name: torchvision_model(n), CNN_SHAPES, CNN_AXES, CNN_AXES)
ZOO["gpt2_block"] = (GPT2Block, [(b, s, 768) for b, s in BLOCK_SEQS], SEQ_AXES, SEQ_AXES)
ZOO["t5_block"] = (T5Block, [(b, s, 512) for b, s in BLOCK_SEQS], SEQ_AXES, SEQ_AXES)
ZOO["llama_block"] = (LlamaBlock, [(b, s, 768) for b, s in BLOCK_SEQS], SEQ_AXES, SEQ_AXES)
ZOO["conformer_block"] = (ConformerBlock, [(b, s, 512) for b, s in BLOCK_SEQS], SEQ_AXES, SEQ_AXES)
ZOO["lstm_tagger"] = (lambda: Tagger(nn.LSTM), [(b, s, 128) for b, s in TAGGER_SEQS], SEQ_AXES, SEQ_AXES)
ZOO["gru_tagger"] = (lambda: Tagger(nn.GRU), [(b, s, 128) for b, s in TAGGER_SEQS], SEQ_AXES, SEQ_AXES)

# Off the zoo: torchvision models exported the zoo's way, one shape each
# (benchmarks/results/unseen-*.md). swin_t and inception_v3 take a fixed size.
UNSEEN = {}
for _name in ["densenet121", "googlenet", "mnasnet1_0", "resnext50_32x4d", "efficientnet_v2_s", "regnet_x_800mf"]:
    UNSEEN[_name] = (lambda n=_name: torchvision_model(n), [(1, 3, 224, 224)], CNN_AXES, {0: "batch"})
UNSEEN["swin_t"] = (lambda: torchvision_model("swin_t"), [(1, 3, 224, 224)], {0: "batch"}, {0: "batch"})
UNSEEN["inception_v3"] = (lambda: torchvision_model("inception_v3"), [(1, 3, 299, 299)], {0: "batch"}, {0: "batch"})


def files(name, shapes):
    return [f"{name}.onnx"] + [f"{name}.{k}.{io}.npy" for k in range(1, len(shapes) + 1) for io in ("input", "output")]


def build(name, outdir):
    builder, shapes, x_axes, y_axes = ZOO[name]
    seed = zlib.crc32(name.encode())
    torch.manual_seed(seed)
    model = randomize(builder()).eval()
    inputs = [torch.randn(*s) for s in shapes]
    with torch.no_grad():
        for k, x in enumerate(inputs, 1):
            np.save(os.path.join(outdir, f"{name}.{k}.input.npy"), x.numpy())
            np.save(os.path.join(outdir, f"{name}.{k}.output.npy"), model(x).numpy())
    # Exported with grad enabled: under no_grad, eval-mode nn.MultiheadAttention (vit_b_16) takes
    # its fused fast path, aten::_native_multi_head_attention, which torch 1.13 cannot export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs[0], os.path.join(outdir, f"{name}.onnx"), opset_version=OPSET,
                          input_names=["x"], output_names=["y"], dynamic_axes={"x": x_axes, "y": y_axes})


def zoo_lines(name):
    shapes = ZOO[name][1]
    return [f"{name} {name}.onnx --input x={name}.{k}.input.npy --expect y={name}.{k}.output.npy"
            for k in range(1, len(shapes) + 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--unseen", action="store_true")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=list(ZOO) + list(UNSEEN))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.unseen:
        ZOO.clear()
        ZOO.update(UNSEEN)
    if a.only and not set(a.only) <= set(ZOO):
        ap.error(f"--only: {sorted(set(a.only) - set(ZOO))} not in this list (--unseen picks the other)")
    if a.list:
        print("\n".join(ZOO))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    os.makedirs(a.outdir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    lines, failed = [], 0
    for name in a.only or ZOO:
        if not (a.keep and all(os.path.exists(os.path.join(a.outdir, f)) for f in files(name, ZOO[name][1]))):
            print(f"make_zoo: {name}", file=sys.stderr, flush=True)
            try:
                build(name, a.outdir)
            except Exception as e:  # one model's export failure should not stop the others
                failed += 1
                error = " ".join(f"{type(e).__name__}: {e}".split())
                print(f"make_zoo: {name} failed: {error}", file=sys.stderr, flush=True)
                lines.append(f"# {name}: export failed: {error}")
                continue
        lines += zoo_lines(name)
    with open(os.path.join(a.outdir, "zoo.txt"), "w") as f:
        f.write("# made by benchmarks/make_zoo.py; one line per (model, shape): NAME MODEL `disco run` arguments\n")
        f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
