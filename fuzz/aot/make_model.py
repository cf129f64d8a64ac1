#!/usr/bin/python3
"""Writes fuzz/aot/fuzz_model.onnx, the model fuzz_aot_entry's library is compiled from.

No onnx package needed: the few protobuf messages are encoded by hand. The model has
four inputs of four dtypes sharing symbolic dims (so the driver binds and checks
symbols across inputs), weights, several kernels with temporaries between them, a
dim that is a product and a quotient, and five outputs:
  a: float32 [batch, seq, 8], b: float32 [seq, 1], c: int64 [n], d: bool [seq]
  y = Softmax(MatMul(Relu(a + b), W))      [batch, seq, 4]
  z = ReduceMean(a, axes=[2], keepdims=0)  [batch, seq]
  w = Concat(c, c * c)                     [2n]
  r = Reshape(a, [-1, 4]) * 2              [batch*seq*2, 4]
  v = Where(d, z, -z)                      [batch, seq]
Run: /usr/bin/python3 fuzz/aot/make_model.py (the output is committed).
"""
import os
import struct


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_int(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def shape(dims):
    out = b""
    for d in dims:
        dim = f_int(1, d) if isinstance(d, int) else f_bytes(2, d)
        out += f_bytes(1, dim)
    return out


def value_info(name, elem_type, dims=None):
    tensor = f_int(1, elem_type) + (f_bytes(2, shape(dims)) if dims is not None else b"")
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tensor))


def attr_int(name, v):
    return f_bytes(1, name) + f_int(3, v) + f_int(20, 2)


def attr_ints(name, vs):
    return f_bytes(1, name) + b"".join(f_int(8, v) for v in vs) + f_int(20, 7)


def node(op, inputs, outputs, name, attrs=()):
    return (b"".join(f_bytes(1, i) for i in inputs) + b"".join(f_bytes(2, o) for o in outputs) +
            f_bytes(3, name) + f_bytes(4, op) + b"".join(f_bytes(5, a) for a in attrs))


def tensor(name, dims, data_type, raw):
    return b"".join(f_int(1, d) for d in dims) + f_int(2, data_type) + f_bytes(8, name) + f_bytes(9, raw)


FLOAT, INT64, BOOL = 1, 7, 9
W = [((i * 7 + j * 3) % 11 - 5) / 8.0 for i in range(8) for j in range(4)]
graph = b"".join([
    f_bytes(1, node("Add", ["a", "b"], ["t1"], "add")),
    f_bytes(1, node("Relu", ["t1"], ["t2"], "relu")),
    f_bytes(1, node("MatMul", ["t2", "W"], ["t3"], "matmul")),
    f_bytes(1, node("Softmax", ["t3"], ["y"], "softmax", [attr_int("axis", -1)])),
    f_bytes(1, node("ReduceMean", ["a"], ["z"], "mean", [attr_ints("axes", [2]), attr_int("keepdims", 0)])),
    f_bytes(1, node("Mul", ["c", "c"], ["c2"], "square")),
    f_bytes(1, node("Concat", ["c", "c2"], ["w"], "concat", [attr_int("axis", 0)])),
    f_bytes(1, node("Reshape", ["a", "shape"], ["ra"], "reshape")),
    f_bytes(1, node("Add", ["ra", "ra"], ["r"], "twice")),
    f_bytes(1, node("Neg", ["z"], ["nz"], "neg")),
    f_bytes(1, node("Where", ["d", "z", "nz"], ["v"], "where")),
    f_bytes(2, "aot_fuzz"),
    f_bytes(5, tensor("W", [8, 4], FLOAT, struct.pack("<32f", *W))),
    f_bytes(5, tensor("shape", [2], INT64, struct.pack("<2q", -1, 4))),
    f_bytes(11, value_info("a", FLOAT, ["batch", "seq", 8])),
    f_bytes(11, value_info("b", FLOAT, ["seq", 1])),
    f_bytes(11, value_info("c", INT64, ["n"])),
    f_bytes(11, value_info("d", BOOL, ["seq"])),
    f_bytes(12, value_info("y", FLOAT)),
    f_bytes(12, value_info("z", FLOAT)),
    f_bytes(12, value_info("w", INT64)),
    f_bytes(12, value_info("r", FLOAT)),
    f_bytes(12, value_info("v", FLOAT)),
])
model = f_int(1, 7) + f_bytes(2, "disco fuzz/aot/make_model.py") + f_bytes(7, graph) + f_bytes(8, f_bytes(1, "") + f_int(2, 13))
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_model.onnx")
with open(path, "wb") as f:
    f.write(model)
print(f"wrote {path} ({len(model)} bytes)")
