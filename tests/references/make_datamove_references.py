#!/usr/bin/python3
"""Inputs and numpy's outputs for the data-movement schedule tests
(tests/schedules/x86_datamove_schedule_test.cc): each op at a shape whose
tiled axes are whole tiles (the x86 schedule's aligned branch) and at one
whose axes are not (its generic branch).

Run with Debian's python: /usr/bin/python3 tests/references/make_datamove_references.py
Writes tests/references/datamove/<case>.<shape tag>.{input,output}.npy.
"""
import os

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "datamove")

# name: (perm, dtype, [aligned shape, odd shape])
TRANSPOSES = {
    "transpose_0312": ((0, 3, 1, 2), np.float32, [(2, 16, 8, 24), (2, 13, 11, 19)]),
    "transpose_0231": ((0, 2, 3, 1), np.float32, [(2, 16, 8, 24), (2, 13, 11, 19)]),
    "transpose_021": ((0, 2, 1), np.float32, [(3, 40, 24), (3, 21, 35)]),
    "transpose_021_i64": ((0, 2, 1), np.int64, [(2, 8, 12), (2, 5, 7)]),
}


def tag(shape):
    return "x".join(str(d) for d in shape)


def main():
    os.makedirs(HERE, exist_ok=True)
    rng = np.random.default_rng(21)
    for name, (perm, dtype, shapes) in TRANSPOSES.items():
        for shape in shapes:
            if dtype == np.int64:
                x = rng.integers(-(2**40), 2**40, size=shape, dtype=np.int64)
            else:
                x = rng.standard_normal(shape).astype(dtype)
            np.save(os.path.join(HERE, f"{name}.{tag(shape)}.input.npy"), x)
            np.save(os.path.join(HERE, f"{name}.{tag(shape)}.output.npy"), np.ascontiguousarray(np.transpose(x, perm)))
            print(name, shape)


if __name__ == "__main__":
    main()
