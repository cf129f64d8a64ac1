#!/usr/bin/python3
"""Inputs and numpy references for tests/lowering/run_time_loop_test.cc.

Run at test time: /usr/bin/python3 make_run_time_loop_references.py OUT_DIR.
Writes CASE.NAME.npy: the inputs of each case and CASE.ref.K.npy, the expected
outputs, computed here with numpy from the ONNX Loop semantics of the models
the test builds (written out beside each), never by disco.
"""
import os
import sys

import numpy as np

OUT = sys.argv[1]
rng = np.random.default_rng(2024)


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), a)


# scan_loop: trips = ReduceSum(k), computed from the data. w = ReduceSum(x, axis 0)
# is an outer value the body reads; s starts at ones(3).
#   body(i, cond, s): s' = 0.5 s + w * float(i); scan y = s' + 1; cond passes through
#   outputs: s after the loop, ys [trips, 3], z = 2 ys
# Trip counts 0 (k empty), 1, 5, 0 (k all zero) and 7, with x of 2, 4, 3, 1 and 5 rows.
for case, (k, rows) in enumerate((([], 2), ([1], 4), ([2, 3], 3), ([0, 0, 0], 1), ([4, 1, 2], 5))):
    x = rng.standard_normal((rows, 3)).astype(np.float32)
    k = np.array(k, dtype=np.int64)
    save(f"scan_loop.{case}.x", x)
    save(f"scan_loop.{case}.k", k)
    w = x.sum(axis=0)
    s = np.ones(3, dtype=np.float32)
    ys = []
    for i in range(int(k.sum())):
        s = (0.5 * s + w * np.float32(i)).astype(np.float32)
        ys.append(s + 1)
    ys = np.array(ys, dtype=np.float32).reshape(len(ys), 3)
    save(f"scan_loop.{case}.ref.0", s)
    save(f"scan_loop.{case}.ref.1", ys)
    save(f"scan_loop.{case}.ref.2", 2 * ys)

# grow_loop: trips = number of positive elements of v (ReduceSum of Cast(v > 0));
# the body computes its own condition, and its shapes depend on the data in
# each iteration (a Compress), as torchvision's paste_masks_in_image does. acc
# starts as a row of zeros [1, 2] and grows by a row each trip (a Concat), as
# paste_masks' result does (from an empty [0, h, w]: a Concat kernel cannot
# yet read an input whose symbolic extent is 0 at run time).
#   body(i, cond, acc): sel = v[v > float(i)]; row = [sum(sel), len(sel)];
#     acc' = concat(acc, [row]); scan c = [len(sel)]; cond' = i < 3
#   outputs: acc [1 + t, 2], cs [t, 1], t = min(trips, 4)
for case, v in enumerate(([-1.0, -2.0], [0.5, 3.0, -1.0, 2.5], [4.5, 1.5, 2.5, 3.5, 0.25, 6.0, -3.0], [7.0])):
    v = np.array(v, dtype=np.float32)
    save(f"grow_loop.{case}.v", v)
    trips = int((v > 0).sum())
    acc = np.zeros((1, 2), dtype=np.float32)
    cs = []
    i, cond = 0, True
    while cond and i < trips:
        sel = v[v > np.float32(i)]
        acc = np.concatenate([acc, np.array([[sel.sum(), len(sel)]], dtype=np.float32)])
        cs.append([len(sel)])
        cond = i < 3
        i += 1
    save(f"grow_loop.{case}.ref.0", acc)
    save(f"grow_loop.{case}.ref.from_empty", acc[1:])  # the same loop from an empty [0, 2]
    save(f"grow_loop.{case}.ref.1", np.array(cs, dtype=np.float32).reshape(len(cs), 1))

# dims_loop: one trip per element of lens (the trip count is lens' extent, a
# shape symbol); the body makes a tensor whose extent is lens[i], read from the
# data in each trip (as paste_masks resizes each mask to its box's size):
#   body(i, cond): z = ConstantOfShape([lens[i]], 1.0); zc = Concat(z, [2, 2]);
#     scan s = [sum(zc * float(i + 1))]
# lens[i] = 0 makes z empty: a Concat of an empty part, as paste_masks pads a
# box at the image's edge with zeros(0, w).
for case, lens in enumerate(([3, 0, 2], [5], [])):
    lens = np.array(lens, dtype=np.int64)
    save(f"dims_loop.{case}.lens", lens)
    s = np.array([[float((n + 4) * (i + 1))] for i, n in enumerate(lens)], dtype=np.float32).reshape(len(lens), 1)
    save(f"dims_loop.{case}.ref.0", s)

# while_loop: no trip count; the condition comes from the data, and the body
# holds a run-time Loop of its own whose trip count is the outer carried value:
#   start = ReduceSum(k); Loop(-, start > 0, x = start):
#     x' = x - 1; cond' = x' > 0; inner = Loop(x, -, a = 0.0){ a' = a + float(x) }; scan y = inner
#   outputs: x after the loop, ys = [start^2, (start-1)^2, ..., 1] ([0] when start <= 0)
for case, k in enumerate(([2, 1], [], [4], [1, -3])):
    k = np.array(k, dtype=np.int64)
    save(f"while_loop.{case}.k", k)
    start = int(k.sum())
    xs = list(range(start, 0, -1))
    save(f"while_loop.{case}.ref.0", np.array(0 if start > 0 else start, dtype=np.int64))
    save(f"while_loop.{case}.ref.1", np.array([float(x * x) for x in xs], dtype=np.float32))
