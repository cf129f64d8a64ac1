#!/usr/bin/python3
"""Reference outputs of the benchmark models at shapes other than the one in
../shared/models, computed with PyTorch from the same weights the ONNX files
hold (../shared/models/make_models.py builds them), so that disco's outputs
are checked against an independent implementation.

Run with Debian's python (torch 1.13): /usr/bin/python3 tests/references/make_references.py
Writes tests/references/<model>.<k>.{input,output}.npy for k = 1, 2, 3.
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "shared", "models")
sys.path.insert(0, SHARED)
import make_models  # noqa: E402

SHAPES = {
    "mlp": [(1, 256), (7, 256), (64, 256)],
    "bert_layer": [(1, 1, 768), (2, 77, 768), (4, 128, 768)],
    "bert_small4": [(1, 1, 256), (2, 33, 256), (4, 64, 256)],
    "convnet": [(1, 3, 32, 32), (2, 3, 17, 23), (4, 3, 64, 48)],
    "layernorm_softmax": [(1, 1, 768), (2, 7, 768), (4, 32, 768)],
}


def main():
    torch.set_num_threads(1)
    for name, shapes in SHAPES.items():
        model = make_models.build_model(name)
        for k, shape in enumerate(shapes, start=1):
            x = make_models.make_input(list(shape), 100 + k)
            with torch.no_grad():
                y = model(x)
            np.save(os.path.join(HERE, f"{name}.{k}.input.npy"), x.numpy())
            np.save(os.path.join(HERE, f"{name}.{k}.output.npy"), y.numpy().astype(np.float32))
            print(name, shape, "->", tuple(y.shape))


if __name__ == "__main__":
    main()
