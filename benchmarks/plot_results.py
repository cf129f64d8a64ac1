#!/usr/bin/env python3
"""The chart of benchmarks/run.sh: disco / ONNX Runtime time per model and shape.

Reads the markdown table that the harness writes (benchmarks/harness.cc; the
first table with `model`, `shape` and `threads` columns and a `... / ORT`
ratio column, `dynamic / ORT` when there are several) and draws one group of
bars per (model, shape), one bar per thread count, with a line at 1.0: below
it disco is faster. Cells whose ratio is not a number (a failed model or
check) are left out and counted in the title.

    benchmarks/plot_results.py TABLE.md CHART.png [--title TEXT]

Needs matplotlib (Debian's python3-matplotlib); draws with the Agg backend,
so no display is needed.
"""
import argparse
import sys
from collections import OrderedDict


def split_row(line):
    """The cells of a markdown table row, stripped."""
    cells = line.strip().strip("|").split("|")
    return [c.strip() for c in cells]


def ratio_column(header):
    """The index of the disco / ORT time ratio column, or None."""
    if "dynamic / ORT" in header:
        return header.index("dynamic / ORT")
    for i, name in enumerate(header):
        if name.endswith("/ ORT"):
            return i
    return None


def read_ratios(text):
    """From a markdown results table: (cells, skipped), where cells is a list of
    (model, shape, threads, ratio) in table order and skipped counts rows whose
    ratio is not a number. Raises ValueError when no table has the columns."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if not line.lstrip().startswith("|"):
            continue
        header = split_row(line)
        col = ratio_column(header)
        if col is None or not {"model", "shape", "threads"} <= set(header):
            continue
        im, ish, ith = header.index("model"), header.index("shape"), header.index("threads")
        cells, skipped = [], 0
        for row_line in lines[start + 1:]:
            if not row_line.lstrip().startswith("|"):
                break
            row = split_row(row_line)
            if all(set(c) <= set("-: ") for c in row):  # the |---|---| separator
                continue
            try:
                cells.append((row[im], row[ish], int(row[ith]), float(row[col])))
            except (ValueError, IndexError):
                skipped += 1
        return cells, skipped
    raise ValueError("no table with model, shape, threads and a '/ ORT' ratio column")


def plot(cells, skipped, out_path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = OrderedDict()  # (model, shape) -> {threads: ratio}, in table order
    for model, shape, threads, ratio in cells:
        groups.setdefault((model, shape), {})[threads] = ratio
    thread_counts = sorted({t for _, _, t, _ in cells})
    n = len(groups)
    width = 0.8 / max(1, len(thread_counts))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * n + 2), 4.5 if n <= 12 else 6.0))  # room for long labels
    for k, t in enumerate(thread_counts):
        xs = [i + (k - (len(thread_counts) - 1) / 2) * width for i in range(n)]
        ys = [g.get(t, float("nan")) for g in groups.values()]
        bars = ax.bar(xs, ys, width, label="%d thread%s" % (t, "" if t == 1 else "s"))
        if n <= 40:
            ax.bar_label(bars, fmt="%.2f", fontsize=6)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(n))
    ax.set_xticklabels(["%s %s" % key for key in groups], rotation=45, ha="right", rotation_mode="anchor",
                       fontsize=8)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylabel("disco / ONNX Runtime time\n(below 1: disco faster)")
    if skipped:
        title += "\n(%d cell%s without a ratio left out)" % (skipped, "" if skipped == 1 else "s")
    ax.set_title(title, fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_path, dpi=100)
    plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(description="Chart disco / ONNX Runtime time ratios from a harness table.")
    p.add_argument("table", help="the markdown table (benchmarks/results/cpu-<date>.md or the harness's --out)")
    p.add_argument("chart", help="the PNG to write")
    p.add_argument("--title", default="disco / ONNX Runtime time per model and shape")
    args = p.parse_args(argv)
    with open(args.table, encoding="utf-8") as f:
        text = f.read()
    try:
        cells, skipped = read_ratios(text)
    except ValueError as e:
        print("plot_results.py: %s: %s" % (args.table, e), file=sys.stderr)
        return 1
    if not cells:
        print("plot_results.py: %s: no cell has a ratio" % args.table, file=sys.stderr)
        return 1
    plot(cells, skipped, args.chart, args.title)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
