#!/usr/bin/python3
"""Generality probe: shape patterns that models disco was not written for
export, each checked for one compile across its shapes and against PyTorch.

Each case is a small PyTorch block (or, with --vision, a torchvision model)
exported by torch.onnx with dynamic axes and random weights (fixed seeds),
run by `disco run` at 2-3 input shapes in one process. A case passes when
  - every output matches PyTorch's (|disco - ref| <= atol + rtol |ref|), and
  - disco compiled once for all of its shapes: no "values ... compiled in"
    (a value-specialised compile per input), which is what a shape fact that
    disco cannot fold costs a user, in seconds per new shape.
The blocks are the patterns past sessions found disco refusing, recompiling
or computing wrong (sequence caches sliced from the back, numel, float
arange, torchvision's _topk_min, Swin's roll and pad to windows, integer
division of shapes) and their neighbours. Models are generated into WORKDIR,
never committed. The table goes to stdout (and --out); the exit status is 1
when any case fails.

usage: benchmarks/generality_probe.py [--disco BIN] [--work DIR] [--only NAME ...]
                                      [--vision] [--out FILE] [--list]
  --disco BIN    disco binary (default build/tools/disco)
  --work DIR     where models and references go (default /tmp/disco-generality)
  --only NAME    these cases only
  --vision       also the torchvision cases (Swin-T with dynamic height and
                 width, SSDlite, Faster R-CNN): minutes each
  --out FILE     also write the table here
  --list         print the case names and exit
"""
import argparse
import os
import re
import subprocess
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # ctest reads 77 as skipped
    print(f"generality probe: skipped, {e} (Debian: python3-torch)", file=sys.stderr)
    sys.exit(77)

CASES = {}  # name -> (build, tier)


def case(tier="block"):
    def reg(fn):
        CASES[fn.__name__] = (fn, tier)
        return fn
    return reg


# Each builder returns (module, input sets, input names, output names, dynamic axes, opset).

@case()
def cache_tail():
    """A streaming cache keeps its last T steps: cache[:, -T:], T from another input."""
    class M(nn.Module):
        def forward(self, cache, x):
            return torch.cat([cache, x], 1)[:, -x.shape[1]:] * 2
    sets = [(torch.randn(1, 20), torch.randn(1, 7)), (torch.randn(3, 9), torch.randn(3, 12))]
    return M(), sets, ["cache", "x"], ["y"], {"cache": {0: "B", 1: "M"}, "x": {0: "B", 1: "T"}}, 13


@case()
def two_symbol_end():
    """x[:, :T - P]: an end whose sign needs two symbols (negative counts from the back)."""
    class M(nn.Module):
        def forward(self, x, p):
            return x[:, : x.shape[1] - p.shape[1]] + 1
    sets = [(torch.randn(2, 9), torch.randn(2, 3)), (torch.randn(2, 4), torch.randn(2, 6))]
    return M(), sets, ["x", "p"], ["y"], {"x": {1: "T"}, "p": {1: "P"}}, 13


@case()
def half_rest():
    """x[:, :M - M // 2] and x[:, -(M // 2):]: the two halves of an odd length."""
    class M(nn.Module):
        def forward(self, x):
            m = x.shape[1]
            return x[:, : m - m // 2].sum(1) + x[:, -(m // 2):].sum(1)
    sets = [(torch.randn(2, 9),), (torch.randn(3, 4),), (torch.randn(1, 1),)]
    return M(), sets, ["x"], ["y"], {"x": {0: "B", 1: "M"}}, 13


@case()
def flatten_numel():
    """Reshape to [batch, prod(shape[1:])] with the product as a ReduceProd of the shape."""
    class M(nn.Module):
        def forward(self, x):
            n = torch.prod(torch._shape_as_tensor(x)[1:])
            return torch.relu(torch.reshape(x, (x.shape[0], n))) + n.float() * 1e-3
    sets = [(torch.randn(2, 3, 5),), (torch.randn(1, 7, 4),), (torch.randn(3, 2, 9),)]
    return M(), sets, ["x"], ["y"], {"x": {0: "b", 1: "s", 2: "t"}}, 13


@case()
def rotary_arange():
    """Rotary position tables from torch.arange(seq, dtype=float)."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("inv", 1.0 / (10000 ** (torch.arange(0, 16, 2).float() / 16)))

        def forward(self, x):
            t = torch.arange(x.shape[1], dtype=torch.float32)
            f = torch.outer(t, self.inv)
            e = torch.cat([f, f], -1)
            half = torch.cat([-x[..., 8:], x[..., :8]], -1)
            return x * e.cos() + half * e.sin()
    sets = [(torch.randn(2, 5, 16),), (torch.randn(1, 9, 16),), (torch.randn(3, 2, 16),)]
    return M(), sets, ["x"], ["y"], {"x": {0: "b", 1: "s"}}, 14


@case()
def topk_min():
    """torchvision's _topk_min: k = min(3, the axis' extent), from a ReduceMin of a Shape."""
    class M(nn.Module):
        def forward(self, x):
            n = torch._shape_as_tensor(x)[1].unsqueeze(0)
            k = torch.min(torch.cat((torch.tensor([3], dtype=n.dtype), n), 0))
            v, i = x.topk(k, dim=1)
            return v, i
    sets = [(torch.randn(2, 2),), (torch.randn(2, 7),)]
    return M(), sets, ["x"], ["v", "i"], {"x": {1: "n"}}, 13


@case()
def window_roll():
    """Swin's shifted windows on a map of any size: pad to whole windows of 7, roll by 3, crop."""
    class M(nn.Module):
        def forward(self, x):
            h, w = x.shape[1], x.shape[2]
            y = F.pad(x, (0, 0, 0, (7 - w % 7) % 7, 0, (7 - h % 7) % 7))
            y = torch.roll(y, shifts=(-3, -3), dims=(1, 2))
            y = y[:, :h, :w, :].contiguous()
            return torch.roll(y * 2, shifts=(3, 3), dims=(1, 2))
    sets = [(torch.randn(1, 9, 11, 4),), (torch.randn(2, 14, 5, 4),), (torch.randn(1, 3, 16, 4),)]
    return M(), sets, ["x"], ["y"], {"x": {0: "b", 1: "h", 2: "w"}}, 13


@case()
def frames_of_audio():
    """Frames of a signal, (T - 400) // 160 + 1, sized by floor division of a shape."""
    class M(nn.Module):
        def forward(self, x):
            n = (x.shape[1] - 400) // 160 + 1
            idx = torch.arange(n).unsqueeze(1) * 160 + torch.arange(400).unsqueeze(0)
            return x[:, idx].pow(2).mean(-1)
    sets = [(torch.randn(1, 1600),), (torch.randn(2, 2345),)]
    return M(), sets, ["x"], ["y"], {"x": {0: "b", 1: "t"}}, 13


@case()
def causal_mask_kv():
    """Attention over a KV cache: a causal mask offset by the cache's length, through Trilu and Where."""
    class M(nn.Module):
        def forward(self, q, k):
            t, s = q.shape[1], k.shape[1]
            mask = torch.ones(t, s, dtype=torch.bool).tril(s - t)
            a = (q @ k.transpose(1, 2)).masked_fill(~mask, float("-inf"))
            return torch.softmax(a, -1) @ k
    sets = [(torch.randn(2, 3, 8), torch.randn(2, 5, 8)), (torch.randn(1, 4, 8), torch.randn(1, 4, 8))]
    return M(), sets, ["q", "k"], ["y"], {"q": {0: "b", 1: "t"}, "k": {0: "b", 1: "s"}}, 14


@case()
def interpolate_half():
    """A map resized by 0.5 with recompute_scale_factor: the size, floor(h * 0.5), computed in float from the shape."""
    class M(nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False,
                                 recompute_scale_factor=True)
    sets = [(torch.randn(1, 2, 17, 24),), (torch.randn(2, 2, 40, 9),)]
    return M(), sets, ["x"], ["y"], {"x": {0: "b", 2: "h", 3: "w"}}, 11


@case("vision")
def swin_t_dynamic_hw():
    """torchvision's Swin-T, dynamic height and width (at 224x224 and 200x160, where the
    export's shift, chosen in Python at 224, is still PyTorch's)."""
    import torchvision.models as tvm
    torch.manual_seed(0)
    sets = [(torch.randn(1, 3, 224, 224),), (torch.randn(2, 3, 200, 160),)]
    return tvm.swin_t().eval(), sets, ["x"], ["y"], {"x": {0: "b", 2: "h", 3: "w"}}, 14


def _spread(m):
    """Weights drawn so that class scores differ: torchvision's own initialisation
    leaves every random-weight detection at one score (1/91), and the order of
    tied boxes is arbitrary on both sides."""
    g = torch.Generator().manual_seed(123)
    for mod in m.modules():
        if isinstance(mod, (nn.Conv2d, nn.Linear)):
            fan_in = mod.weight[0].numel()
            mod.weight.data = torch.randn(mod.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5
            if mod.bias is not None:
                mod.bias.data = torch.randn(mod.bias.shape, generator=g) * 0.1
    return m


class _Det(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = _spread(m)

    def forward(self, x):
        o = self.m([x[0]])[0]
        return o["boxes"], o["scores"], o["labels"]


def _detection(model):
    """A detector's case: boxes, scores and labels of one image, at two sizes."""
    sets = [(torch.rand(1, 3, 320, 320),), (torch.rand(1, 3, 240, 300),)]
    return _Det(model).eval(), sets, ["x"], ["boxes", "scores", "labels"], {"x": {2: "H", 3: "W"}}, 11


@case("vision")
def ssdlite():
    """torchvision's SSDlite 320, dynamic height and width (its TopK's K from _topk_min)."""
    import torchvision.models.detection as tvd
    return _detection(tvd.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, score_thresh=0.0,
                                                        detections_per_img=20))


@case("vision")
def fasterrcnn_mobilenet():
    """torchvision's Faster R-CNN (MobileNetV3 320 FPN), dynamic height and width."""
    import torchvision.models.detection as tvd
    return _detection(tvd.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None,
                                                                box_score_thresh=0.0, box_detections_per_img=20))


def flat(o, acc):
    if isinstance(o, (tuple, list)):
        for x in o:
            flat(x, acc)
    elif o is not None:
        acc.append(o)
    return acc


def export(name, work):
    """Exports one case and its references; returns disco's run arguments."""
    torch.manual_seed(0)
    model, sets, in_names, out_names, dyn, opset = CASES[name][0]()
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    out_dyn = {n: {i: f"{n}_{i}" for i in range(flat(model(*sets[0]), [])[k].dim())} for k, n in enumerate(out_names)}
    with torch.no_grad():
        torch.onnx.export(model, tuple(sets[0]), path, input_names=in_names, output_names=out_names,
                          dynamic_axes={**dyn, **out_dyn}, opset_version=opset)
    args, shapes = [], []
    for k, inputs in enumerate(sets):
        with torch.no_grad():
            outs = flat(model(*inputs), [])
        for n, t in zip(in_names, inputs):
            p = os.path.join(d, f"in{k}_{n}.npy")
            np.save(p, np.ascontiguousarray(t.numpy()))
            args += ["--input", f"{n}={p}"]
        for n, t in zip(out_names, outs):
            p = os.path.join(d, f"ref{k}_{n}.npy")
            np.save(p, np.ascontiguousarray(t.numpy()))
            args += ["--expect", f"{n}={p}"]
        shapes.append("x".join(str(s) for s in inputs[0].shape))
    return path, args, shapes


def run(name, disco, work):
    t0 = time.time()
    try:
        path, args, shapes = export(name, work)
    except Exception as e:  # an exporter limit, not disco's
        return {"name": name, "shapes": "", "compile": "export failed", "checks": repr(e)[:120], "ok": None,
                "s": time.time() - t0}
    cmd = [disco, "run", path, *args, "--threads", "2", "--repeat", "1", "--rtol", "1e-3", "--atol", "1e-4",
           "--no-cache"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        out, rc = "timed out after 1800 s", -9
    with open(os.path.join(work, name, "log.txt"), "w") as f:
        f.write(" ".join(cmd) + "\n" + out)
    compiles = [l for l in out.splitlines() if l.startswith("compile:")]
    checks = re.findall(r"check (\S+): (ok|FAIL)", out)
    per_shape = any("compiled in" in l for l in compiles)
    bad = [c for c in checks if c[1] != "ok"]
    ok = rc == 0 and not per_shape and not bad and len(compiles) == 1 and checks
    if rc != 0 and not bad:
        err = [l for l in out.splitlines() if "error" in l.lower()]
        summary = (err[-1] if err else out.strip().splitlines()[-1] if out.strip() else f"rc {rc}")[:160]
    else:
        summary = f"{len(checks) - len(bad)} of {len(checks)} ok"
    compile_text = "per shape" if per_shape else (f"once ({len(compiles)} line)" if len(compiles) == 1 else
                                                   f"{len(compiles)} compiles")
    if len(compiles) == 1 and not per_shape:
        m = re.search(r"compile: ([\d.]+) s", compiles[0])
        compile_text = f"once, {m.group(1)} s" if m else "once"
    return {"name": name, "shapes": ", ".join(shapes), "compile": compile_text, "checks": summary.replace("|", "/"),
            "ok": bool(ok), "s": time.time() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter,
                                 epilog=__doc__.split("usage:")[0].split("\n\n", 1)[1])
    ap.add_argument("--disco", default="build/tools/disco")
    ap.add_argument("--work", default="/tmp/disco-generality")
    ap.add_argument("--only", nargs="+", default=[])
    ap.add_argument("--vision", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for n, (fn, tier) in CASES.items():
            print(f"{n:24s} {tier:7s} {fn.__doc__.splitlines()[0]}")
        return 0
    names = [n for n, (_, tier) in CASES.items() if (a.only and n in a.only) or (not a.only and (a.vision or tier == "block"))]
    unknown = set(a.only) - set(CASES)
    if unknown:
        sys.exit(f"unknown cases: {', '.join(sorted(unknown))} (--list names them)")
    os.makedirs(a.work, exist_ok=True)
    rows = []
    for n in names:
        print(f"generality probe: {n} ...", file=sys.stderr, flush=True)
        rows.append(run(n, a.disco, a.work))
    lines = ["| case | input shapes | compile | checks against PyTorch | result | s |", "|---|---|---|---|---|---|"]
    for r in rows:
        res = "pass" if r["ok"] else ("skip" if r["ok"] is None else "**FAIL**")
        lines.append(f"| {r['name']} | {r['shapes']} | {r['compile']} | {r['checks']} | {res} | {r['s']:.0f} |")
    failed = sum(1 for r in rows if r["ok"] is False)
    lines.append("")
    lines.append(f"{len(rows)} cases: {sum(1 for r in rows if r['ok'])} pass, {failed} fail, "
                 f"{sum(1 for r in rows if r['ok'] is None)} not exported.")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
