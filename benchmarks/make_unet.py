#!/usr/bin/python3
"""A small UNet (Conv, ConvTranspose 2x2 stride 2, Concat, ReLU) with random
weights, exported by torch.onnx with dynamic batch, height and width, for the
conv/deconv row of the backends sweep (issue #20). Generated, never committed.

usage: benchmarks/make_unet.py OUT.onnx
"""
import sys

import torch
from torch import nn


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, c=8, w=16):
        super().__init__()
        self.e1, self.e2, self.mid = block(c, w), block(w, 2 * w), block(2 * w, 4 * w)
        self.pool = nn.MaxPool2d(2)
        self.u2, self.d2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2), block(4 * w, 2 * w)
        self.u1, self.d1 = nn.ConvTranspose2d(2 * w, w, 2, stride=2), block(2 * w, w)
        self.head = nn.Conv2d(w, 2, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.d2(torch.cat([self.u2(m), e2], 1))
        d1 = self.d1(torch.cat([self.u1(d2), e1], 1))
        return self.head(d1)


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    torch.manual_seed(0)
    model = UNet().eval()
    x = torch.randn(2, 8, 48, 64)
    torch.onnx.export(model, x, sys.argv[1], input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "batch", 2: "H", 3: "W"}, "y": {0: "batch", 2: "H", 3: "W"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
