#!/usr/bin/python3
"""GELU as PyTorch exports it below opset 20, where ONNX has no Gelu: each
module below exported at opset 17 (decomposed into Div/Mul, Erf or Tanh, Add
and Mul nodes), with an input and PyTorch's output, for
tests/lowering/graph_rewrites_test.cc (the rewrite that folds these patterns
into one Gelu node). linear_gelu puts the erf form after a Linear, where the
oneDNN backend fuses it as a post-op.

Run with Debian's python (torch 1.13): /usr/bin/python3 tests/references/make_gelu_references.py
Writes tests/references/gelu/<name>.onnx, <name>.input.npy and <name>.output.npy.
"""
import math
import os

import numpy as np
import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gelu")


class HalfFirst(torch.nn.Module):
    """x * 0.5 * (1 + erf(x / sqrt 2)): the halving on x, a Mul by 1/sqrt 2."""

    def forward(self, x):
        return x * 0.5 * (1 + torch.erf(x * (1 / math.sqrt(2))))


class GeluNew(torch.nn.Module):
    """GPT-2's gelu_new (Hugging Face): the cube as Pow(x, 3)."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def linear_gelu():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU())


MODELS = {
    "gelu_erf": lambda: torch.nn.GELU(),
    "gelu_tanh": lambda: torch.nn.GELU(approximate="tanh"),
    "gelu_erf_half_first": HalfFirst,
    "gelu_new_pow": GeluNew,
    "linear_gelu": linear_gelu,
}


def main():
    os.makedirs(HERE, exist_ok=True)
    torch.set_num_threads(1)
    rng = np.random.default_rng(21)
    # A spread over both tails, 0 and -0 included.
    x = np.concatenate([np.linspace(-12, 12, 3 * 7 * 16 - 2), [0.0, -0.0]]).astype(np.float32)
    x = rng.permutation(x).reshape(3, 7, 16)
    for name, make in MODELS.items():
        model = make().eval()
        path = os.path.join(HERE, name)
        torch.onnx.export(model, torch.from_numpy(x), path + ".onnx", opset_version=17, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        with torch.no_grad():
            y = model(torch.from_numpy(x).double()) if name != "linear_gelu" else model(torch.from_numpy(x))
        np.save(path + ".input.npy", x)
        np.save(path + ".output.npy", y.numpy().astype(np.float32))
        print(name, "->", path + ".onnx")


if __name__ == "__main__":
    main()
