"""Transformer blocks outside the zoo (benchmarks/make_zoo.py), for a generality
check of disco's speed and numbers on patterns it was not tuned on: GPT-NeoX's
partial rotary embedding (the first 16 of each head's 64 dims, a Concat of the
rotated and passed parts), ALiBi attention (a per-head slope times relative
positions added to the scores), an MLP-Mixer block (token mixing through a
Transpose) and a Whisper-style audio front end (two Conv1d with GELU, a
sinusoidal position table, LayerNorm). Random weights (fixed seed), opset 17,
dynamic batch and sequence (the mixer's 196 tokens fixed). Writes the models,
inputs and PyTorch outputs and a harness sweep file (sweep.txt) into the
current folder:

  cd OUT && /usr/bin/python3 .../make_transformer_probe.py
  build/benchmarks/harness --sweep OUT/sweep.txt --check --skip-static --threads 1,2 --runs 10 --out F

Left out: GPT-J's interleaved rotary (x[..., ::2], x[..., 1::2] stacked and
flattened). torch 1.13 exported it inside this block as a Reshape whose -1
would be a fraction (ONNX Runtime refuses the model at run time; disco at
compile time, naming that Reshape).
"""
import math, os, sys
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_export import export_probe
torch.manual_seed(11)
D, H = 512, 8
def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)
class Attn(nn.Module):
    def __init__(self, kind):
        super().__init__(); self.kind = kind
        self.qkv = nn.Linear(D, 3 * D); self.o = nn.Linear(D, D)
        self.n1 = nn.LayerNorm(D); self.n2 = nn.LayerNorm(D)
        self.up = nn.Linear(D, 4 * D); self.down = nn.Linear(4 * D, D)
        self.slopes = torch.tensor([2 ** (-8 * (i + 1) / H) for i in range(H)])
    def forward(self, x):
        b, s, _ = x.shape; hd = D // H
        h = self.n1(x)
        q, k, v = self.qkv(h).split(D, dim=-1)
        q = q.view(b, s, H, hd).transpose(1, 2); k = k.view(b, s, H, hd).transpose(1, 2); v = v.view(b, s, H, hd).transpose(1, 2)
        pos = torch.arange(s, dtype=torch.float32, device=x.device)
        if self.kind == "neox":  # rotary on the first 16 of each head's 64 dims
            rd = 16
            inv = 1.0 / (10000 ** (torch.arange(0, rd, 2, dtype=torch.float32) / rd))
            fr = pos[:, None] * inv[None, :]
            emb = torch.cat((fr, fr), dim=-1); cos, sin = emb.cos(), emb.sin()
            qr, qp = q[..., :rd], q[..., rd:]; kr, kp = k[..., :rd], k[..., rd:]
            q = torch.cat((qr * cos + rotate_half(qr) * sin, qp), dim=-1)
            k = torch.cat((kr * cos + rotate_half(kr) * sin, kp), dim=-1)
        att = q @ k.transpose(-1, -2) / math.sqrt(hd)
        if self.kind == "alibi":
            rel = pos[None, :] - pos[:, None]
            att = att + self.slopes[:, None, None] * rel[None]
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, D)
        x = x + self.o(y)
        return x + self.down(F.gelu(self.up(self.n2(x))))
class Mixer(nn.Module):
    def __init__(self, tokens=196):
        super().__init__(); self.n1 = nn.LayerNorm(D); self.n2 = nn.LayerNorm(D)
        self.t1 = nn.Linear(tokens, 256); self.t2 = nn.Linear(256, tokens); self.c1 = nn.Linear(D, 2048); self.c2 = nn.Linear(2048, D)
    def forward(self, x):
        y = self.n1(x).transpose(1, 2); x = x + self.t2(F.gelu(self.t1(y))).transpose(1, 2)
        return x + self.c2(F.gelu(self.c1(self.n2(x))))
class Whisper(nn.Module):
    def __init__(self):
        super().__init__(); self.c1 = nn.Conv1d(80, 384, 3, padding=1); self.c2 = nn.Conv1d(384, 384, 3, stride=2, padding=1)
        self.n = nn.LayerNorm(384); self.l = nn.Linear(384, 384)
    def forward(self, x):  # x [b, 80, t]
        y = F.gelu(self.c2(F.gelu(self.c1(x)))).permute(0, 2, 1)
        pos = torch.arange(y.shape[1], dtype=torch.float32)[:, None] * torch.ones(384) / 1000.0
        return self.l(self.n(y + torch.sin(pos)))
models = {
  "neox_rotary": (Attn("neox"), [(1, 128, D), (2, 77, D)], {0: "batch", 1: "seq"}, {0: "batch", 1: "seq"}),
  "alibi_block": (Attn("alibi"), [(1, 128, D), (2, 77, D)], {0: "batch", 1: "seq"}, {0: "batch", 1: "seq"}),
  "mixer_block": (Mixer(), [(1, 196, D), (4, 196, D)], {0: "batch"}, {0: "batch"}),
  "whisper_front": (Whisper(), [(1, 80, 400), (2, 80, 300)], {0: "batch", 2: "t"}, {0: "batch", 1: "t2"}),
}
export_probe(models, "transformer blocks outside the zoo (benchmarks/make_transformer_probe.py)")
