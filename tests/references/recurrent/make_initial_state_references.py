#!/usr/bin/python3
"""Recurrent layers started from given states, for
tests/schedules/x86_recurrent_schedule_test.cc: PyTorch's nn.LSTM (h0 and c0)
and nn.GRU (h0), one bidirectional layer, batch_first, exported to ONNX
(opset 14, dynamic batch and seq) with the states as model inputs, and their
outputs at two shapes. The states are random (non-zero), so a kernel that
skipped them, or read its state buffer where nothing was written, differs.

lstm_h64_state: input 10, hidden 64 (whole tiles of the recurrent template);
gru_small_state: input 10, hidden 20 (masked tails). Batch 1 (a row per
statement) and batch 6 (a whole tile of batch rows and a partial one).

Run with Debian's python (torch 1.13):
  /usr/bin/python3 tests/references/recurrent/make_initial_state_references.py
Writes NAME.onnx and NAME.<k>.{x,h0,c0,output}.npy (c0 for the LSTM only) next to itself.
"""
import os

import numpy as np
import torch

OUT = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(1, 7), (6, 5)]  # (batch, seq)
INPUT = 10


class LstmFromState(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.rnn = torch.nn.LSTM(INPUT, hidden, bidirectional=True, batch_first=True)

    def forward(self, x, h0, c0):
        return self.rnn(x, (h0, c0))[0]


class GruFromState(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.rnn = torch.nn.GRU(INPUT, hidden, bidirectional=True, batch_first=True)

    def forward(self, x, h0):
        return self.rnn(x, h0)[0]


MODELS = [("lstm_h64_state", LstmFromState, 64, ["x", "h0", "c0"]), ("gru_small_state", GruFromState, 20, ["x", "h0"])]


def main():
    for seed, (name, cls, hidden, inputs) in enumerate(MODELS, start=10):
        torch.manual_seed(seed)
        model = cls(hidden).eval()

        def sample(batch, seq):
            x = torch.randn(batch, seq, INPUT)
            states = [torch.randn(2, batch, hidden) for _ in inputs[1:]]
            return [x] + states

        dynamic = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
        for n in inputs[1:]:
            dynamic[n] = {1: "batch"}
        torch.onnx.export(model, tuple(sample(1, 4)), os.path.join(OUT, name + ".onnx"), opset_version=14,
                          input_names=inputs, output_names=["y"], dynamic_axes=dynamic)
        for k, (batch, seq) in enumerate(SHAPES, start=1):
            values = sample(batch, seq)
            with torch.no_grad():
                y = model(*values)
            for n, v in zip(inputs, values):
                np.save(os.path.join(OUT, f"{name}.{k}.{n}.npy"), v.numpy().astype(np.float32))
            np.save(os.path.join(OUT, f"{name}.{k}.output.npy"), y.numpy().astype(np.float32))
            print(name, (batch, seq, INPUT), "->", tuple(y.shape))


if __name__ == "__main__":
    main()
