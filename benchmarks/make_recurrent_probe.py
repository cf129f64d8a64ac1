"""Recurrent models outside the zoo (benchmarks/make_zoo.py), for a generality
check of disco's recurrent kernels: a one-direction GRU with hidden 512 (R
3 MiB, past a 2 MiB L2) in seq-first layout, a three-layer batch-first LSTM with
hidden 128 and a Linear head, a bidirectional tanh RNN, and one-direction
seq-first layers whose R (4 G H^2 bytes) lies on either side of what one
core's L2 holds (LSTM hidden 256: 1 MiB; GRU 384: 1.7 MiB; LSTM 512: 4 MiB) at
1, 2 and 8 batch rows. Writes the models,
inputs and PyTorch outputs and a harness sweep file (sweep.txt) into the
current folder:

  cd OUT && /usr/bin/python3 .../make_recurrent_probe.py
  build/benchmarks/harness --sweep OUT/sweep.txt --check --skip-static --threads 1,2 --runs 10 --out F
"""
import os, sys
import torch, torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_export import export_probe
torch.manual_seed(7)
class Wrap(nn.Module):
    def __init__(self, rnn, head=None):
        super().__init__(); self.rnn = rnn; self.head = head
    def forward(self, x):
        y = self.rnn(x)[0]
        return self.head(y) if self.head is not None else y
models = {
  "gru_h512_seqfirst": (Wrap(nn.GRU(256, 512)), [(64, 16, 256), (20, 2, 256)], {0: "seq", 1: "batch"}),
  "lstm_h128_3layers": (Wrap(nn.LSTM(64, 128, num_layers=3, batch_first=True), nn.Linear(128, 10)), [(1, 100, 64), (16, 40, 64)], {0: "batch", 1: "seq"}),
  "rnn_h256_bidir": (Wrap(nn.RNN(128, 256, bidirectional=True, batch_first=True)), [(4, 50, 128), (12, 30, 128)], {0: "batch", 1: "seq"}),
  "lstm_h256_seqfirst": (Wrap(nn.LSTM(128, 256)), [(30, 2, 128), (30, 1, 128), (20, 8, 128)], {0: "seq", 1: "batch"}),
  "gru_h384_seqfirst": (Wrap(nn.GRU(128, 384)), [(30, 2, 128), (30, 1, 128), (20, 8, 128)], {0: "seq", 1: "batch"}),
  "lstm_h512_seqfirst": (Wrap(nn.LSTM(128, 512)), [(30, 2, 128), (30, 1, 128), (20, 8, 128)], {0: "seq", 1: "batch"}),
}
def uniform_weights(m):
    for p in m.parameters():
        with torch.no_grad(): p.uniform_(-0.08, 0.08)
export_probe({name: (m, shapes, axes, axes) for name, (m, shapes, axes) in models.items()},
             "recurrent models outside the zoo (benchmarks/make_recurrent_probe.py)", uniform_weights)
