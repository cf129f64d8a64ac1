#!/usr/bin/python3
"""Inputs and numpy's outputs for the data-movement schedule tests
(tests/schedules/x86_datamove_schedule_test.cc): each op at a shape whose
tiled axes are whole tiles or vectors (the x86 schedule's aligned branch)
and at one whose axes are not (its generic branch and tails).

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


# name: (op, pads, count_include_pad, [aligned shape, odd shape]); kernel 3x3, strides 2.
POOLS = {
    "maxpool_3x3_s2_pad1": ("max", 1, 0, [(2, 3, 16, 32), (2, 3, 13, 11)]),
    "maxpool_3x3_s2": ("max", 0, 0, [(2, 3, 17, 33), (2, 3, 13, 11)]),
    "avgpool_3x3_s2_pad1": ("avg", 1, 0, [(2, 3, 16, 32), (2, 3, 13, 11)]),
    "avgpool_3x3_s2_pad1_include_pad": ("avg", 1, 1, [(2, 3, 16, 32), (2, 3, 13, 11)]),
    "avgpool_3x3_s2": ("avg", 0, 0, [(2, 3, 17, 33), (2, 3, 13, 11)]),
}


def pool(x, op, pad, include_pad):
    """3x3 stride-2 pool of [N, C, H, W] with `pad` on every side, windows
    over the padded input (pads: -inf for max, 0 and not counted for avg
    unless include_pad)."""
    n, c, h, w = x.shape
    oh, ow = (h + 2 * pad - 3) // 2 + 1, (w + 2 * pad - 3) // 2 + 1
    fill = -np.inf if op == "max" else 0.0
    xp = np.full((n, c, h + 2 * pad, w + 2 * pad), fill, dtype=np.float64)
    xp[:, :, pad:pad + h, pad:pad + w] = x
    inside = np.zeros((h + 2 * pad, w + 2 * pad))
    inside[pad:pad + h, pad:pad + w] = 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            if op == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                count = 9 if include_pad else inside[2 * i:2 * i + 3, 2 * j:2 * j + 3].sum()
                out[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return out.astype(np.float32)


# name: (mode, coordinate transformation mode, scale, [aligned shape, odd shape]); PyTorch's
# F.interpolate is the reference (its bicubic is Keys' a = -0.75, half_pixel without align_corners).
RESIZES = {
    "resize_linear_2x": ("bilinear", "half_pixel", 2, [(2, 3, 8, 16), (2, 3, 5, 7)]),
    "resize_cubic_2x": ("bicubic", "half_pixel", 2, [(2, 3, 8, 16), (2, 3, 5, 7)]),
    "resize_linear_4x": ("bilinear", "half_pixel", 4, [(1, 2, 4, 8), (1, 2, 3, 5)]),
    "resize_linear_align_corners_2x": ("bilinear", "align_corners", 2, [(2, 3, 8, 16), (2, 3, 5, 7)]),
    "resize_linear_align_corners_3x": ("bilinear", "align_corners", 3, [(1, 2, 4, 8), (1, 2, 3, 5)]),
    # Scales that are not whole: align_corners divides by the output length less one (not in * scale
    # less one); 0.3 and 1.3 as float32 are a hair off 3/10 and 13/10, which must not move a nearest
    # tap (output 3 reads column 10 at 0.3) nor the output extent (10 x 1.3 is 13).
    "resize_linear_align_corners_1_5x": ("bilinear", "align_corners", 1.5, [(1, 2, 4, 8), (1, 2, 5, 7)]),
    "resize_cubic_align_corners_0_6x": ("bicubic", "align_corners", 0.6, [(1, 2, 10, 20), (1, 2, 4, 4)]),
    "resize_nearest_0_3x": ("nearest", "asymmetric", 0.3, [(1, 2, 10, 20), (1, 2, 17, 33)]),
    "resize_nearest_1_3x": ("nearest", "asymmetric", 1.3, [(1, 2, 10, 20), (1, 2, 17, 33)]),
}


def resize(x, mode, ctm, scale):
    import torch  # Debian's python3-torch; only the Resize references need it
    import torch.nn.functional as F
    align = (ctm == "align_corners") if mode != "nearest" else None
    y = F.interpolate(torch.from_numpy(x), scale_factor=float(scale), mode=mode, align_corners=align)
    return y.numpy().astype(np.float32)


def tag(shape):
    return "x".join(str(d) for d in shape)


def main():
    os.makedirs(HERE, exist_ok=True)
    rng = np.random.default_rng(21)

    def save(name, shape, x, y):
        np.save(os.path.join(HERE, f"{name}.{tag(shape)}.input.npy"), x)
        np.save(os.path.join(HERE, f"{name}.{tag(shape)}.output.npy"), y)
        print(name, shape)

    for name, (perm, dtype, shapes) in TRANSPOSES.items():
        for shape in shapes:
            if dtype == np.int64:
                x = rng.integers(-(2**40), 2**40, size=shape, dtype=np.int64)
            else:
                x = rng.standard_normal(shape).astype(dtype)
            save(name, shape, x, np.ascontiguousarray(np.transpose(x, perm)))
    for name, (op, pad, include_pad, shapes) in POOLS.items():
        for shape in shapes:
            x = rng.standard_normal(shape).astype(np.float32)
            save(name, shape, x, pool(x, op, pad, include_pad))
    for name, (mode, ctm, scale, shapes) in RESIZES.items():
        for shape in shapes:
            x = rng.standard_normal(shape).astype(np.float32)
            save(name, shape, x, resize(x, mode, ctm, scale))

if __name__ == "__main__":
    main()
