#!/usr/bin/env python3
"""PyTorch eager (CUDA) side of benchmarks/gpu_check.sh.

Times each model at the reference shapes with the same weights as the ONNX
files (make_models.build_model, copied from ../shared/models by --prepare),
TF32 off so that both sides compute in float32, and checks its output against
the reference too. Prints one tab-separated line per model and shape:
    MODEL  K  SHAPE  MEDIAN_MS  WORST
(WORST <= 1: within rtol/atol) or "MODEL K - error MESSAGE".
"""
import argparse
import os
import sys
import time

import numpy as np
import torch


def worst(got, want, rtol, atol):
    return float(np.max(np.abs(got - want) / (atol + rtol * np.abs(want)))) if want.size else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models-py", required=True, help="folder holding make_models.py")
    ap.add_argument("--refs", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("models", nargs="+", help="NAME or NAME=REFERENCE_NAME")
    args = ap.parse_args()
    sys.path.insert(0, args.models_py)
    import make_models  # noqa: E402

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    for spec in args.models:
        name, _, ref = spec.partition("=")
        ref = ref or name
        torch_name = "convnet" if name == "convnet_bn" else name
        try:
            model = make_models.build_model(torch_name).to(dev)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"{name}\t-\t-\terror\t{str(e).splitlines()[0] if str(e) else type(e).__name__}", flush=True)
            continue
        for k in (1, 2, 3):
            try:
                x_np = np.load(os.path.join(args.refs, f"{ref}.{k}.input.npy"))
                want = np.load(os.path.join(args.refs, f"{ref}.{k}.output.npy"))
                x = torch.from_numpy(x_np).to(dev)
                with torch.no_grad():
                    got = model(x)
                    for _ in range(3):
                        model(x)
                    torch.cuda.synchronize()
                    ms = []
                    for _ in range(args.runs):
                        t0 = time.perf_counter()
                        model(x)
                        torch.cuda.synchronize()
                        ms.append((time.perf_counter() - t0) * 1e3)
                ms.sort()
                w = worst(got.float().cpu().numpy(), want, args.rtol, args.atol)
                shape = "x".join(str(d) for d in x_np.shape)
                print(f"{name}\t{k}\t{shape}\t{ms[len(ms) // 2]:.4f}\t{w:.3g}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{name}\t{k}\t-\terror\t{str(e).splitlines()[0] if str(e) else type(e).__name__}", flush=True)


if __name__ == "__main__":
    main()
