#!/usr/bin/python3
"""How far below ONNX Runtime each zoo cell can go when its flops run at the core's FMA peak.

usage: zoo_roofline.py [--peak1 GFLOPS --peak2 GFLOPS] ZOO-RESULT.md [ZOO-RESULT.md ...] [--out FILE.md]

For each (model, shape) of the zoo (benchmarks/make_zoo.py) it counts the
convolution and matrix-product flops with PyTorch's profiler (with_flops;
multiply-adds count two), takes the median ONNX Runtime and disco times of
each cell over the given sweep results (benchmarks/zoo_sweep.sh), and prints:
  - each side's achieved GFLOP/s;
  - the "peak bound": the time of those flops at the measured FMA peak
    (benchmarks/fma_peak.c, built and run here unless --peak1 and --peak2
    give it) over ONNX Runtime's time, which is
    the lowest disco / ONNX Runtime ratio a cell can reach without doing
    fewer flops (Winograd) or overlapping threads' work differently;
  - the geometric means of those bounds, per thread count.
Depthwise, dilated and padded convolutions are counted at their full
kernel size (PyTorch's count), so for DeepLab's ASPP the bound is loose.
"""
import argparse
import collections
import importlib.util
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch

from plot_results import split_row


def sweep_times(paths):
    """(model, shape, threads) -> ([disco ms], [ORT ms]) over the result files' tables, their columns
    found by name in each table's header (rows are split as plot_results.py splits them)."""
    cols = ("model", "shape", "threads", "disco dynamic ms", "ONNX Runtime ms")
    cells = collections.defaultdict(lambda: ([], []))
    for p in paths:
        header = None  # the current table's, when it has the columns
        for line in open(p):
            if not line.lstrip().startswith("|"):
                header = None
                continue
            row = split_row(line)
            if header is None:
                header = [row.index(c) for c in cols] if set(cols) <= set(row) else []
                continue
            if not header or len(row) <= max(header):
                continue
            model, shape, threads, d, o = (row[k] for k in header)
            if threads in ("1", "2") and re.fullmatch(r"[\d.]+", d) and re.fullmatch(r"[\d.]+", o):
                disco, ort = cells[(model, shape, int(threads))]
                disco.append(float(d))
                ort.append(float(o))
    return cells


def zoo_flops(names):
    """(model, shape text) -> flops of the model's conv and product ops, per make_zoo.py."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("make_zoo", os.path.join(here, "make_zoo.py"))
    zoo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(zoo)
    flops = {}
    for name, (builder, shapes, *_) in zoo.ZOO.items():
        if name not in names:
            continue
        torch.manual_seed(0)
        model = builder().eval()
        for s in shapes:
            with torch.no_grad(), torch.autograd.profiler.profile(with_flops=True) as p:
                model(torch.randn(*s))
            flops[(name, "x".join(map(str, s)))] = sum(e.flops for e in p.function_events if e.flops)
    return flops


def measured_peak(threads):
    """GFLOP/s of benchmarks/fma_peak.c on `threads` threads, best of three."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "fma_peak")
        subprocess.run(["cc", "-O2", "-mavx512f", "-pthread", os.path.join(here, "fma_peak.c"), "-o", exe], check=True)
        return max(float(subprocess.run([exe, str(threads)], check=True, capture_output=True, text=True).stdout)
                   for _ in range(3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+", help="zoo sweep result files (benchmarks/results/zoo-*.md)")
    ap.add_argument("--peak1", type=float, help="FMA peak at 1 thread, GFLOP/s (default: measured)")
    ap.add_argument("--peak2", type=float, help="FMA peak at 2 threads, GFLOP/s (default: measured)")
    ap.add_argument("--compute-bound", type=float, default=0.6,
                    help="a cell is compute-bound where ONNX Runtime reaches this share of the peak (default 0.6)")
    ap.add_argument("--reachable", type=float, default=0.9,
                    help="the share of the peak that compute-bound cells are assumed to reach at best (default 0.9)")
    ap.add_argument("--bar", type=float, default=0.85, help="the geometric-mean bar (default 0.85)")
    ap.add_argument("--out", help="write the markdown here (default: stdout)")
    a = ap.parse_args()
    a.peak1 = a.peak1 or measured_peak(1)
    a.peak2 = a.peak2 or measured_peak(2)
    cells = sweep_times(a.results)
    if not cells:
        sys.exit("zoo_roofline.py: no zoo rows in " + ", ".join(a.results))
    torch.set_num_threads(1)
    flops = zoo_flops({k[0] for k in cells})
    peak = {1: a.peak1, 2: a.peak2}
    out = ["# Zoo cells against the FMA peak", "",
           "Command: `benchmarks/zoo_roofline.py " + " ".join(sys.argv[1:]) + "`", "",
           "Read: \"peak bound\" is the cell's flops at the peak over ONNX Runtime's time, the lowest disco / "
           "ONNX Runtime can go without doing fewer flops (Winograd) or fewer memory passes.", "",
           f"Peak: {a.peak1:g} GFLOP/s at 1 thread, {a.peak2:g} at 2. Times: medians over the result files "
           "above. Flops: convolutions and products (PyTorch's profiler, multiply-adds count two).", "",
           "| model | shape | threads | GFLOP | ORT GFLOP/s | disco GFLOP/s | disco / ORT | peak bound | "
           "compute-bound |",
           "|---|---|---|---|---|---|---|---|---|"]
    logs = collections.defaultdict(lambda: ([], [], [], []))
    for key in sorted(cells, key=lambda k: (k[2], k[0], k[1])):
        name, shape, t = key
        if (name, shape) not in flops:
            continue
        d, o = (statistics.median(v) for v in cells[key])
        g = flops[(name, shape)] / 1e9
        bound = g / peak[t] * 1e3 / o
        compute = g / o * 1e3 >= a.compute_bound * peak[t]
        logs[t][0].append(math.log(d / o))
        logs[t][1].append(math.log(bound))
        # Compute-bound cells: the ratio at the reachable share of the peak, or the measured one where that is
        # lower already (DeepLab's counted flops include its ASPP's padding); the others: as measured.
        if compute:
            logs[t][2].append(math.log(min(bound / a.reachable, d / o)))
        else:
            logs[t][3].append(math.log(d / o))
        out.append(f"| {name} | {shape} | {t} | {g:.3f} | {g / o * 1e3:.0f} | {g / d * 1e3:.0f} | {d / o:.2f} | "
                   f"{bound:.2f} | {'yes' if compute else ''} |")
    out.append("")
    for t in sorted(logs):
        ratio, bound, best, rest = logs[t]
        gm = lambda v: math.exp(sum(v) / len(v)) if v else float("nan")
        out.append(f"Threads {t}: geometric mean of disco / ORT {gm(ratio):.3f}, of the peak bound {gm(bound):.3f} "
                   f"({len(ratio)} cells).")
        # What the other cells' geometric mean must be for the whole to meet the bar, with the
        # compute-bound ones at their best.
        need = math.exp((len(ratio) * math.log(a.bar) - sum(best)) / len(rest)) if rest else float("nan")
        out.append(f"  {len(best)} compute-bound cells (ONNX Runtime at {a.compute_bound:g} of the peak or more): "
                   f"at {a.reachable:g} of the peak (or as now where lower) their geometric mean would be "
                   f"{gm(best):.3f}; for {a.bar:g} "
                   f"overall the other {len(rest)} cells would need {need:.3f} (now {gm(rest):.3f}).")
    text = "\n".join(out) + "\n"
    if a.out:
        open(a.out, "w").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
