#!/usr/bin/python3
"""Small recurrent taggers for tests/schedules/x86_recurrent_schedule_test.cc:
PyTorch's nn.LSTM and nn.GRU with two bidirectional layers, batch_first, exported
to ONNX (opset 14, dynamic batch and seq) as the model zoo's taggers are, and
their outputs at four shapes.

lstm_small: input 10, hidden 24 (three AVX2 vectors: a partial tile of the
recurrent template); gru_small: input 10, hidden 20 (not a whole number of
vectors: masked tails); lstm_h64: one bidirectional layer, input 10, hidden 64
(whole tiles of the template: 16 terms of k per statement, 16 hidden units by
4 or 8 batch rows). Batch 6 (the third shape) runs the template's tile of
batch rows on AVX2, a whole block of 4 and a partial one, and half tiles of 4
rows on AVX-512 (blocks of 8); batch 11 (the fourth) a whole block of 8 and a
partial one on AVX-512. lstm_forward and gru_forward: one forward layer
(hidden 24 and 20) at FORWARD_SHAPES, whose first two have more rows of X
(batch x seq) than one task of the template's input projection (48): a
forward layer over more than one task once failed its bounds check. Weights
and inputs from fixed seeds.

Run with Debian's python (torch 1.13): /usr/bin/python3 tests/references/make_recurrent_references.py [NAME...]
(NAME: only these models). Writes tests/references/recurrent/NAME.onnx and
NAME.<k>.input.npy / NAME.<k>.output.npy for k = 1, 2, 3, 4.
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "recurrent")
SHAPES = [(1, 7), (3, 5), (6, 5), (11, 4)]  # (batch, seq)
FORWARD_SHAPES = [(1, 50), (4, 13), (6, 5), (11, 4)]
INPUT = 10


class Tagger(torch.nn.Module):
    def __init__(self, cell, hidden, layers, bidirectional):
        super().__init__()
        self.rnn = cell(INPUT, hidden, num_layers=layers, bidirectional=bidirectional, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


# (name, cell, hidden, layers, bidirectional, shapes); new models go last (the seed is the index).
MODELS = [("lstm_small", torch.nn.LSTM, 24, 2, True, SHAPES), ("gru_small", torch.nn.GRU, 20, 2, True, SHAPES),
          ("lstm_h64", torch.nn.LSTM, 64, 1, True, SHAPES), ("lstm_forward", torch.nn.LSTM, 24, 1, False, FORWARD_SHAPES),
          ("gru_forward", torch.nn.GRU, 20, 1, False, FORWARD_SHAPES)]


# lstm_long: one forward layer (input 16, hidden 32) at 64 x 200 = 12,800 rows of X, whose input
# projection's buffer was once sized by its task count (3.5 GB, refused). The input is
# sin(0.001 i) over its elements in order (the test makes it too), and only the last step's
# outputs, [64, 32], are kept.
LONG_SHAPE = (64, 200, 16)


def long_input():
    return np.sin(0.001 * np.arange(np.prod(LONG_SHAPE), dtype=np.float64)).astype(np.float32).reshape(LONG_SHAPE)


def make_long():
    torch.manual_seed(len(MODELS))
    model = torch.nn.LSTM(16, 32, batch_first=True).eval()
    torch.onnx.export(model, (torch.randn(2, 3, 16),), os.path.join(OUT, "lstm_long.onnx"), opset_version=14,
                      input_names=["x"], output_names=["y", "h", "c"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    with torch.no_grad():
        y = model(torch.from_numpy(long_input()))[0]
    np.save(os.path.join(OUT, "lstm_long.last_step.npy"), y[:, -1, :].numpy().astype(np.float32))
    print("lstm_long", LONG_SHAPE, "->", tuple(y.shape))


def main():
    os.makedirs(OUT, exist_ok=True)
    for seed, (name, cell, hidden, layers, bidirectional, shapes) in enumerate(MODELS):
        if len(sys.argv) > 1 and name not in sys.argv[1:]:
            continue
        torch.manual_seed(seed)
        model = Tagger(cell, hidden, layers, bidirectional).eval()
        x0 = torch.randn(1, 4, INPUT)
        torch.onnx.export(model, (x0,), os.path.join(OUT, name + ".onnx"), opset_version=14,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
        for k, (batch, seq) in enumerate(shapes, start=1):
            x = torch.randn(batch, seq, INPUT)
            with torch.no_grad():
                y = model(x)
            np.save(os.path.join(OUT, f"{name}.{k}.input.npy"), x.numpy().astype(np.float32))
            np.save(os.path.join(OUT, f"{name}.{k}.output.npy"), y.numpy().astype(np.float32))
            print(name, (batch, seq, INPUT), "->", tuple(y.shape))


if __name__ == "__main__":
    main()
    if len(sys.argv) == 1 or "lstm_long" in sys.argv[1:]:
        make_long()
