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
import torch, numpy as np, torch.nn as nn
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
lines = []
for name, (m, shapes, axes) in models.items():
    m.eval()
    for p in m.parameters():
        with torch.no_grad(): p.uniform_(-0.08, 0.08)
    xs = [torch.randn(*s) for s in shapes]
    torch.onnx.export(m, xs[0], f"{name}.onnx", input_names=["x"], output_names=["y"], dynamic_axes={"x": axes, "y": axes}, opset_version=17)
    for k, x in enumerate(xs, 1):
        with torch.no_grad(): y = m(x)
        np.save(f"{name}.{k}.input.npy", x.numpy()); np.save(f"{name}.{k}.output.npy", y.numpy())
        lines.append(f"{name} {name}.onnx --input x={name}.{k}.input.npy --expect y={name}.{k}.output.npy")
open("sweep.txt", "w").write("# recurrent models outside the zoo (benchmarks/make_recurrent_probe.py)\n" + "\n".join(lines) + "\n")
