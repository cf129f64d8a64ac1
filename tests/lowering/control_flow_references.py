#!/usr/bin/python3
"""Inputs, weights and numpy references for tests/lowering/control_flow_test.cc.

Run at test time: /usr/bin/python3 control_flow_references.py OUT_DIR. Writes
CASE.NAME.npy files: the inputs and weights the test builds its models from,
and CASE.ref.K.npy, the expected outputs, computed here with numpy from the
ONNX semantics of each model (written out beside each case), never by disco.
"""
import os
import sys

import numpy as np

OUT = sys.argv[1]
rng = np.random.default_rng(24)


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), a)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


# if_if: a = 2x; If_25(mode) { input_data1 = a + 1; If_69(flag) { input_data1 * x } else { input_data1 - a } }
# else { -x }. The inner branches read the outer branch's value and the main graph's a and x.
# x is [n, 3]: a second data set has 5 rows.
for rows, suffix in ((2, ""), (5, ".5rows")):
    x = f32(rows, 3)
    save("if_if.x" + suffix, x)
    for mode in (0, 1):
        for flag in (0, 1):
            a = 2 * x
            d = a + 1
            y = (d * x if flag else d - a) if mode else -x
            save("if_if.ref.%d%d%s" % (mode, flag, suffix), y.astype(np.float32))

# if_loop_if: b = x + 1; If(true) { c = 2b; Loop(3, s = x) { If(i < 2) { 0.5s + i + c } else { s - x } } }:
# final s and the stacked per-iteration values. The innermost If reads the Loop's iteration number and
# carried value (one level up), the outer If branch's c (two) and the main graph's x (three).
x = f32(2, 3)
save("if_loop_if.x", x)
c = 2 * (x + 1)
s = x
steps = []
for i in range(3):
    s = 0.5 * s + i + c if i < 2 else s - x
    steps.append(s)
save("if_loop_if.ref.0", s.astype(np.float32))
save("if_loop_if.ref.1", np.stack(steps).astype(np.float32))

# if_scan_if: m = 0.5b; If(true) { w = m + 1; Scan(h = 0, e over rows of x) { If(flag) { h + e*w }
# else { 0.5h + e - m } } }: final h and every h. The innermost If reads the Scan's state and element,
# w two levels up and m three.
x, b = f32(4, 3), f32(3)
save("if_scan_if.x", x)
save("if_scan_if.b", b)
for flag in (0, 1):
    m = 0.5 * b
    w = m + 1
    h = np.zeros(3, np.float32)
    hs = []
    for e in x:
        h = h + e * w if flag else 0.5 * h + e - m
        hs.append(h)
    save("if_scan_if.ref.%d.0" % flag, h.astype(np.float32))
    save("if_scan_if.ref.%d.1" % flag, np.stack(hs).astype(np.float32))

# recurrent: If(flag) { LSTM(x, W, R, B) } else { GRU(x, Wg, Rg, Bg) }: Y_h, [1, batch, hidden].
# The weights are main-graph initializers the branches read. ONNX gate orders: LSTM i, o, f, c; GRU z, r, h
# (linear_before_reset = 0).
seq, batch, inp, hid = 3, 2, 4, 5
x = f32(seq, batch, inp)
W, R, B = f32(1, 4 * hid, inp) * 0.5, f32(1, 4 * hid, hid) * 0.5, f32(1, 8 * hid) * 0.5
Wg, Rg, Bg = f32(1, 3 * hid, inp) * 0.5, f32(1, 3 * hid, hid) * 0.5, f32(1, 6 * hid) * 0.5
for k, v in dict(x=x, W=W, R=R, B=B, Wg=Wg, Rg=Rg, Bg=Bg).items():
    save("recurrent." + k, v)
h = np.zeros((batch, hid), np.float32)
cs = np.zeros((batch, hid), np.float32)
for t in range(seq):
    g = x[t] @ W[0].T + h @ R[0].T + B[0, :4 * hid] + B[0, 4 * hid:]
    i, o, f, cc = np.split(g, 4, axis=1)
    cs = sigmoid(f) * cs + sigmoid(i) * np.tanh(cc)
    h = sigmoid(o) * np.tanh(cs)
save("recurrent.ref.1", h[None].astype(np.float32))
h = np.zeros((batch, hid), np.float32)
wz, wr, wh = np.split(Wg[0], 3)
rz, rr, rh = np.split(Rg[0], 3)
bwz, bwr, bwh, brz, brr, brh = np.split(Bg[0], 6)
for t in range(seq):
    z = sigmoid(x[t] @ wz.T + h @ rz.T + bwz + brz)
    r = sigmoid(x[t] @ wr.T + h @ rr.T + bwr + brr)
    hh = np.tanh(x[t] @ wh.T + (r * h) @ rh.T + bwh + brh)
    h = (1 - z) * hh + z * h
save("recurrent.ref.0", h[None].astype(np.float32))

# shapes_differ: If(flag) { x } else { Concat(x, x, axis 0) }.
x = f32(2, 3)
save("shapes_differ.x", x)
save("shapes_differ.ref.1", x)
save("shapes_differ.ref.0", np.concatenate([x, x]))

# loop_scan_loop: Loop(2, s = b) { i; Scan(h = s, e over rows of x) { Loop(2, u = h) { u + e*i + 0.5s } } }:
# final s and, per outer iteration, the Scan's stacked states. The innermost Loop body reads the Scan's
# element (two levels up) and the outer Loop's iteration number and carried value (three).
x, b = f32(4, 3), f32(3)
save("loop_scan_loop.x", x)
save("loop_scan_loop.b", b)
s = b
per_iteration = []
for i in range(2):
    h = s
    hs = []
    for e in x:
        u = h
        for _ in range(2):
            u = u + e * i + 0.5 * s
        h = u
        hs.append(h)
    s = h
    per_iteration.append(np.stack(hs))
save("loop_scan_loop.ref.0", s.astype(np.float32))
save("loop_scan_loop.ref.1", np.stack(per_iteration).astype(np.float32))

# passthrough: a = 2x; If(mode) { b1 = a + 1; If(flag) { b1 } else { x } } else { a }: branches that
# output an enclosing graph's value as it is, with no node.
x = f32(2, 3)
save("passthrough.x", x)
for mode in (0, 1):
    for flag in (0, 1):
        y = (2 * x + 1 if flag else x) if mode else 2 * x
        save("passthrough.ref.%d%d" % (mode, flag), y.astype(np.float32))
