#!/usr/bin/python3
"""Reference outputs of the benchmark models at the benchmark sweep shapes
(issue #5), too large to store whole: each model runs in PyTorch, from the same
weights as the ONNX files, on an input given by a formula that C++ reproduces
exactly (tests/sweep_test.cc), and 4096 evenly spaced output elements are kept.

Input element i (row-major) is ((i * 7919) % 2001) / 1000 - 1, computed in
double and rounded to float32. Sample j of an output with n elements is element
(j * (n - 1)) // 4095.

Run with Debian's python (torch 1.13): /usr/bin/python3 tests/references/make_sweep_references.py
Writes tests/references/sweep/<model>.<shape>.npy (float32, 4096 samples).
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "shared", "models")
sys.path.insert(0, SHARED)
import make_models  # noqa: E402

SWEEP = {
    "mlp": [(1, 256), (16, 256), (256, 256)],
    "bert_layer": [(1, 32, 768), (1, 128, 768), (4, 128, 768), (8, 384, 768)],
    "bert_small4": [(1, 64, 256), (8, 128, 256)],
    "convnet": [(1, 3, 64, 64), (8, 3, 128, 128)],
    "layernorm_softmax": [(1, 128, 768), (16, 512, 768)],
}
SAMPLES = 4096


def formula_input(shape):
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    return ((i * 7919) % 2001).astype(np.float64) / 1000.0 - 1.0


def main():
    torch.set_num_threads(2)
    out_dir = os.path.join(HERE, "sweep")
    os.makedirs(out_dir, exist_ok=True)
    for name, shapes in SWEEP.items():
        model = make_models.build_model(name)
        for shape in shapes:
            x = torch.from_numpy(formula_input(shape).astype(np.float32).reshape(shape))
            with torch.no_grad():
                y = model(x).numpy().astype(np.float32).reshape(-1)
            n = y.size
            idx = (np.arange(SAMPLES, dtype=np.int64) * (n - 1)) // (SAMPLES - 1)
            tag = "x".join(str(d) for d in shape)
            np.save(os.path.join(out_dir, f"{name}.{tag}.npy"), y[idx])
            print(name, shape, "->", n, "elements")


if __name__ == "__main__":
    main()
