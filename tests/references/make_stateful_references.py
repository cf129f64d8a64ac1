#!/usr/bin/python3
"""A streaming model for the stateful tests (issue #24 point 4): token ids
(int64) in chunks, an LSTM whose state (h, c) is passed from one call to the
next, and a scalar float input (a softmax temperature), as a streaming tagger
or language model is run. PyTorch's nn.Embedding + nn.LSTM + nn.Linear,
exported to ONNX (opset 14, dynamic batch and chunk length).

Inputs:  ids [batch, seq] int64, h [1, batch, 16], c [1, batch, 16],
         temperature [] float32 (a scalar)
Outputs: probs [batch, seq, 12] (softmax(logits / temperature)), h_out, c_out

References: three chunks of one stream (batch 2, chunk lengths 5, 3 and 4),
PyTorch's state carried from each chunk to the next, starting from h0, c0
(random, not zeros, so that a run that drops the initial state shows).
Chunk k's outputs are what the k-th call must return when the previous call's
h_out and c_out are fed back as h and c.

A second model, flip_state, has a state that a run must read whole before
it writes the new one: s_out = s transposed * 0.5 + x (s and x [n, n]). A
caller that passes one buffer as both s and s_out (an in-place update) gets
wrong answers unless disco reads s from a copy. References: three steps
from s0, written as flip_x.<k>.npy and flip_s_out.<k>.npy.

Run with Debian's python (torch 1.13): /usr/bin/python3 tests/references/make_stateful_references.py
Writes tests/references/stateful/stream_lstm.onnx, ids.<k>.npy, h0.npy,
c0.npy, temperature.npy and probs.<k>.npy, h_out.<k>.npy, c_out.<k>.npy for
k = 1, 2, 3, and flip_state.onnx, flip_s0.npy, flip_x.<k>.npy, flip_s_out.<k>.npy.
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "stateful")
VOCAB, EMBED, HIDDEN, CLASSES = 20, 8, 16, 12
CHUNKS = [5, 3, 4]
BATCH = 2


class StreamLSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, EMBED)
        self.rnn = torch.nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, CLASSES)

    def forward(self, ids, h, c, temperature):
        y, (h_out, c_out) = self.rnn(self.embed(ids), (h, c))
        return torch.softmax(self.head(y) / temperature, -1), h_out, c_out


class FlipState(torch.nn.Module):
    def forward(self, s, x):
        return s.t() * 0.5 + x


def save(name, a):
    np.save(os.path.join(OUT, name), np.array(a, order="C"))  # ascontiguousarray would make a scalar 1-d


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    model = StreamLSTM().eval()
    g = torch.Generator().manual_seed(1)
    h = torch.randn(1, BATCH, HIDDEN, generator=g) * 0.5
    c = torch.randn(1, BATCH, HIDDEN, generator=g) * 0.5
    temperature = torch.tensor(0.7)
    example = (torch.zeros(1, 3, dtype=torch.int64), torch.zeros(1, 1, HIDDEN), torch.zeros(1, 1, HIDDEN), temperature)
    torch.onnx.export(model, example, os.path.join(OUT, "stream_lstm.onnx"), opset_version=14,
                      input_names=["ids", "h", "c", "temperature"], output_names=["probs", "h_out", "c_out"],
                      dynamic_axes={"ids": {0: "batch", 1: "seq"}, "h": {1: "batch"}, "c": {1: "batch"},
                                    "probs": {0: "batch", 1: "seq"}, "h_out": {1: "batch"}, "c_out": {1: "batch"}})
    save("h0.npy", h.numpy())
    save("c0.npy", c.numpy())
    save("temperature.npy", temperature.numpy().astype(np.float32))
    with torch.no_grad():
        for k, n in enumerate(CHUNKS, 1):
            ids = torch.randint(0, VOCAB, (BATCH, n), generator=g)
            probs, h, c = model(ids, h, c, temperature)
            save(f"ids.{k}.npy", ids.numpy())
            save(f"probs.{k}.npy", probs.numpy())
            save(f"h_out.{k}.npy", h.numpy())
            save(f"c_out.{k}.npy", c.numpy())

    n = 6
    torch.onnx.export(FlipState(), (torch.zeros(n, n), torch.zeros(n, n)), os.path.join(OUT, "flip_state.onnx"),
                      opset_version=14, input_names=["s", "x"], output_names=["s_out"],
                      dynamic_axes={"s": {0: "n", 1: "n"}, "x": {0: "n", 1: "n"}, "s_out": {0: "n", 1: "n"}})
    s = torch.randn(n, n, generator=g)
    save("flip_s0.npy", s.numpy())
    for k in (1, 2, 3):
        x = torch.randn(n, n, generator=g)
        s = FlipState()(s, x)
        save(f"flip_x.{k}.npy", x.numpy())
        save(f"flip_s_out.{k}.npy", s.numpy())


if __name__ == "__main__":
    main()
