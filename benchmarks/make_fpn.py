#!/usr/bin/env python3
"""A small FPN-like model for kernel sharing (issue #26, targets/host/shape_pattern.h).

A stem conv and three stride-2 convs, each followed by the same 5-op activation
chain (Mul, Add, Sigmoid, Mul, Sub), then a top-down path (nearest Resize to
the next level's size, Add, the chain). n, h and w are dynamic, so each level's
extents are symbolic expressions: h, (h + 1)/2, ((h + 1)/2 + 1)/2, ...

  make_fpn.py export OUT.onnx [N,H,W]        axis names (default n,h,w)
  make_fpn.py check DISCO MODEL.onnx [TARGETS]
      runs MODEL with DISCO at three input shapes and compares every output
      with PyTorch's (the weights are seeded, so the model is the same)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn


class FPN(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.down = nn.ModuleList([nn.Conv2d(16, 16, 3, stride=2, padding=1) for _ in range(3)])

    @staticmethod
    def act(x):
        y = x * 1.5 + 0.25
        return y * torch.sigmoid(y) - 0.125

    def forward(self, x):
        f = self.act(self.stem(x))
        levels = [f]
        for d in self.down:
            f = self.act(d(f))
            levels.append(f)
        top = levels[-1]
        outs = [top]
        for lv in reversed(levels[:-1]):
            top = self.act(lv + nn.functional.interpolate(top, size=lv.shape[-2:], mode="nearest"))
            outs.append(top)
        return tuple(outs)


def export(path, names):
    n, h, w = names
    outs = [f"p{i}" for i in range(4)]
    dyn = {"x": {0: n, 2: h, 3: w}, **{o: {0: n} for o in outs}}
    torch.onnx.export(FPN().eval(), (torch.randn(1, 3, 64, 48),), path, input_names=["x"], output_names=outs,
                      dynamic_axes=dyn, opset_version=17)


def check(disco, model, targets):
    m = FPN().eval()
    worst = 0.0
    for shape in [(1, 3, 64, 48), (2, 3, 37, 53), (1, 3, 17, 9)]:
        x = np.random.RandomState(sum(shape)).randn(*shape).astype(np.float32)
        with torch.no_grad():
            want = [t.numpy() for t in m(torch.from_numpy(x))]
        d = tempfile.mkdtemp()
        np.save(os.path.join(d, "x.npy"), x)
        subprocess.run([disco, "run", model, "--input", f"x={d}/x.npy", "--output-dir", d, "--targets", targets],
                       check=True, capture_output=True)
        for i, ref in enumerate(want):
            got = np.load(os.path.join(d, f"p{i}.npy"))
            assert got.shape == ref.shape, (shape, i, got.shape, ref.shape)
            worst = max(worst, float(np.abs(got - ref).max()))
        print(shape, "max abs error so far", worst)
    print("ok" if worst < 1e-4 else "FAIL", worst)
    return worst < 1e-4


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3].split(",") if len(sys.argv) > 3 else ("n", "h", "w"))
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        sys.exit(0 if check(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "host") else 1)
    else:
        sys.exit(__doc__)
