#!/usr/bin/python3
"""Compare disco's detection outputs with PyTorch's, allowing tied scores to
come in either order (issue #24, point 3; benchmarks/make_detection.py).

With random weights many detections score exactly alike, and which of the tied
boxes comes first (and which make the cut to detections_per_img) differs
between PyTorch's sort and NMS and disco's. So:

  - boxes, scores and labels must have the reference's shapes;
  - scores must match position by position within --rtol/--atol (as
    `disco run --expect` checks);
  - rows are grouped by tied reference scores (consecutive rows, sorted by
    score as torchvision returns them, whose scores differ by at most --tie
    relative); inside a group the rows may come in any order: each
    reference row (label, box) must be matched by a distinct output row of
    the same group with the same label and the box within --rtol/--atol.
    Outside ties this is the position-by-position check;
  - a tie group that reaches the last row may hold other boxes than the
    reference, since the tie continued past the cut: its unmatched rows are
    reported as unverifiable, not as a mismatch (--strict-cut makes them fail).

usage:
  benchmarks/detection_compare.py OUTPUTS REFPREFIX [--runs K ...] [--rtol X] [--atol X] [--tie X]

OUTPUTS is a `disco run --output-dir` folder: OUTPUTS/run<k>/{boxes,scores,labels}.npy
for several input sets, or OUTPUTS/{boxes,...}.npy for one. REFPREFIX is the
references' path up to the shape number: REFPREFIX.<k>.{boxes,scores,labels}.npy
(e.g. /tmp/det/fasterrcnn_mobilenet_v3_large_320_fpn). --runs gives the shape
number of each run in order (default 1 2 3 ..., as many as OUTPUTS has runs).
Exit status 0 when every run matches, 1 on a mismatch, 2 on a usage error.

example:
  disco run M.op17.onnx --input x=M.1.input.npy --input x=M.2.input.npy --input x=M.3.input.npy --output-dir out
  benchmarks/detection_compare.py out /tmp/det/M
"""
import argparse
import os
import sys

import numpy as np

OUTPUTS = ("boxes", "scores", "labels")


def tie_groups(scores, tie):
    """[start, end) ranges of consecutive rows whose scores tie within `tie` (relative)."""
    groups, start = [], 0
    for i in range(1, len(scores) + 1):
        if i == len(scores) or abs(scores[i] - scores[i - 1]) > tie * max(abs(scores[i]), abs(scores[i - 1])):
            groups.append((start, i))
            start = i
    return groups


def match(ref_rows, out_rows, close):
    """Maximum matching of reference rows to output rows (close(r, o) says which may pair):
    Kuhn's augmenting paths; groups are small. Returns the unmatched reference rows."""
    owner = {}

    def augment(r, seen):
        for o in out_rows:
            if o not in seen and close(r, o):
                seen.add(o)
                if o not in owner or augment(owner[o], seen):
                    owner[o] = r
                    return True
        return False

    return [r for r in ref_rows if not augment(r, set())]


def compare(out, ref, rtol, atol, tie, strict_cut):
    """Returns (ok, words): one run's verdict and what was seen."""
    for name in OUTPUTS:
        if out[name].shape != ref[name].shape:
            return False, [f"{name}: shape {list(out[name].shape)}, reference {list(ref[name].shape)}"]
    words, ok = [], True

    def within(a, b):
        return np.all(np.abs(a.astype(np.float64) - b) <= atol + rtol * np.abs(b.astype(np.float64)))

    s_out, s_ref = out["scores"].astype(np.float64), ref["scores"].astype(np.float64)
    s_err = float(np.abs(s_out - s_ref).max()) if s_ref.size else 0.0
    if not within(s_out, s_ref):
        ok = False
        words.append(f"scores FAIL (max abs error {s_err:.3g})")
    else:
        words.append(f"scores ok ({s_err:.3g})")

    b_out, b_ref = out["boxes"].astype(np.float64), ref["boxes"].astype(np.float64)
    l_out, l_ref = out["labels"], ref["labels"]
    b_err = float(np.abs(b_out - b_ref).max()) if b_ref.size else 0.0
    moved, unmatched, unverified, groups = 0, [], [], tie_groups(s_ref, tie)
    for start, end in groups:
        rows = list(range(start, end))
        for i in rows:
            if not (l_out[i] == l_ref[i] and within(b_out[i], b_ref[i])):
                moved += 1
        left = match(rows, rows, lambda r, o: l_out[o] == l_ref[r] and within(b_out[o], b_ref[r]))
        if left and end == len(s_ref) and end - start > 1 and not strict_cut:
            unverified += left
        else:
            unmatched += left
    tied = sum(end - start for start, end in groups if end - start > 1)
    if unmatched:
        ok = False
        words.append(f"boxes/labels FAIL: rows {unmatched} have no match (max positional box error {b_err:.3g})")
    else:
        words.append(f"boxes/labels ok (positional box error {b_err:.3g}; {tied} rows in ties, "
                     f"{moved} of them in another order)")
    if unverified:
        words.append(f"rows {unverified} unverifiable: a tie across the cut at {len(s_ref)}")
    return ok, words


def load(folder, names):
    return {n: np.load(os.path.join(folder, f"{n}.npy")) for n in names}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage=argparse.SUPPRESS)
    ap.add_argument("outputs", help="disco run --output-dir folder")
    ap.add_argument("refprefix", help="references' path up to .<k>.{boxes,scores,labels}.npy")
    ap.add_argument("--runs", nargs="+", type=int, metavar="K", help="shape number of each run (default 1 2 ...)")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-3)
    ap.add_argument("--tie", type=float, default=1e-6, help="relative score difference counted as a tie")
    ap.add_argument("--strict-cut", action="store_true", help="a tie across the last row must match too")
    a = ap.parse_args()
    runs = sorted((d for d in os.listdir(a.outputs) if d.startswith("run") and d[3:].isdigit()),
                  key=lambda d: int(d[3:])) if os.path.isdir(a.outputs) else None
    if runs is None:
        ap.error(f"{a.outputs}: not a folder")
    folders = [os.path.join(a.outputs, d) for d in runs] or [a.outputs]
    shapes = a.runs or list(range(1, len(folders) + 1))
    if len(shapes) != len(folders):
        ap.error(f"--runs gives {len(shapes)} shape numbers for {len(folders)} runs")
    failed = 0
    for k, (folder, shape) in enumerate(zip(folders, shapes), 1):
        try:
            out = load(folder, OUTPUTS)
            ref = {n: np.load(f"{a.refprefix}.{shape}.{n}.npy") for n in OUTPUTS}
        except OSError as e:
            print(f"run {k}: {e}")
            failed += 1
            continue
        ok, words = compare(out, ref, a.rtol, a.atol, a.tie, a.strict_cut)
        failed += not ok
        print(f"run {k} vs {os.path.basename(a.refprefix)}.{shape}: {'ok' if ok else 'FAIL'}: " + "; ".join(words))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
