#!/usr/bin/env bash
# Issue #24's torchvision zoo check: runs each cell of ZOODIR/cells.txt (made by
# benchmarks/make_tv_zoo.py) with `disco run MODEL --input x=... --expect y=...
# --rtol --atol`, each under a timeout, appends the outcome to ZOODIR/results.tsv
# (a cell already there is not run again unless --rerun), and writes the table of
# all the results (model, opset, shapes, pass/fail with the max error or the
# error message; beside the error, the largest |y| of the reference) to --table FILE.
#
#   benchmarks/tv_zoo_check.sh ZOODIR [--disco BIN] [--only NAME]... [--timeout S]
#                              [--rtol X] [--atol X] [--rerun] [--table FILE]
#
# --disco: the disco binary (default build/tools/disco); --timeout: seconds per
# cell, compile included (default 900); --rtol/--atol: the check's tolerances
# (default 1e-3 and 1e-4, as the speed sweep's harness). The compile cache is
# disco's default one, so a model's second input size (and a rerun) reuses the
# first cell's compile.
set -euo pipefail
cd "$(dirname "$0")/.."

disco=build/tools/disco timeout=900 rtol=1e-3 atol=1e-4 rerun=0 table="" only=() zoo=""
while [ $# -gt 0 ]; do
  case "$1" in
    --disco) disco=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --rtol) rtol=$2; shift 2 ;;
    --atol) atol=$2; shift 2 ;;
    --rerun) rerun=1; shift ;;
    --table) table=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tv_zoo_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) zoo=$1; shift ;;
  esac
done
[ -n "$zoo" ] && [ -s "$zoo/cells.txt" ] || { echo "tv_zoo_check.sh: no ZOODIR/cells.txt (run make_tv_zoo.py)" >&2; exit 2; }
disco="$(realpath "$disco")"
results="$zoo/results.tsv"
touch "$results"
log="$zoo/logs"
mkdir -p "$log"

wanted() {
  [ ${#only[@]} -eq 0 ] && return 0
  local n
  for n in "${only[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

# cells.txt may hold a model twice (make_tv_zoo.py run again, e.g. after a fix to its export): make_tv_zoo.py
# appends a model's lines together, so a model's last block of lines is its current set of cells. Its older
# cells (an export failure since fixed, a skip since lifted) are neither run nor shown in the table.
current_cells() {
  awk -F'\t' 'NF { if ($1 != prev) blocks++; prev = $1; last[$1] = blocks; line[NR] = $0; block[NR] = blocks; name[NR] = $1 }
               END { for (i = 1; i <= NR; i++) if ((i in line) && block[i] == last[name[i]]) print line[i] }' "$zoo/cells.txt"
}
current_cells > "$zoo/cells.current.txt"
while IFS=$'\t' read -r name opset shape kind model input expect; do
  wanted "$name" || continue
  key="$name"$'\t'"$opset"$'\t'"$shape"
  has_key='$1 == n && $2 == o && $3 == s'
  if [ "$rerun" = 0 ] && [ -n "$(awk -F'\t' -v n="$name" -v o="$opset" -v s="$shape" "$has_key" "$results")" ]; then
    continue
  fi
  awk -F'\t' -v n="$name" -v o="$opset" -v s="$shape" "!($has_key)" "$results" > "$results.tmp"
  mv "$results.tmp" "$results"
  if [ "$kind" != run ]; then
    printf '%s\t%s\t0\n' "$key" "$kind"$'\t'"$model" >> "$results"  # export failure or skip: $model holds the message
    continue
  fi
  out="$log/$name.$opset.$shape.txt"
  start=$(date +%s.%N)
  rc=0
  (cd "$zoo" && timeout "$timeout" nice -n 10 "$disco" run "$model" --input "x=$input" --expect "y=$expect" \
      --rtol "$rtol" --atol "$atol") < /dev/null > "$out" 2>&1 || rc=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  check="$(grep -m1 '^  check y: ' "$out" | sed 's/^  check y: //' || true)"
  if [ $rc = 0 ] && [[ "$check" == ok* ]]; then
    status=pass detail="$check"
  elif [ $rc = 124 ]; then
    status=timeout detail="no result within ${timeout} s"
  elif [ -n "$check" ]; then
    status=fail detail="$check"
  else
    status=error detail="$(grep -v '^\s*$' "$out" | tail -n 3 | tr '\n\t' '  ' | cut -c1-600) (exit $rc)"
  fi
  printf '%s\t%s\t%s\t%.0f\n' "$key" "$status" "$detail" "$secs" >> "$results"
  echo "tv_zoo_check: $name opset $opset $shape: $status ($detail) ${secs%.*} s" >&2
done < "$zoo/cells.current.txt"

[ -n "$table" ] || exit 0
# Every model make_tv_zoo.py knows gets a row: those with no cells yet say so.
/usr/bin/python3 benchmarks/make_tv_zoo.py --list > "$zoo/all-models.txt"
/usr/bin/python3 - "$results" "$table" "$zoo/cells.txt" "$zoo/cells.current.txt" "$zoo/all-models.txt" <<'EOF'
import os, re, sys
import numpy as np
results, table, all_cells, cells, all_models = sys.argv[1:]
order = []  # the models in the order they were first made
for line in open(all_cells):
    f = line.rstrip("\n").split("\t")
    if line.strip() and f[0] not in order:
        order.append(f[0])
expect = {}  # (name, opset, shape) -> the reference's file, to show the output's size beside the error
for line in open(cells):
    f = line.rstrip("\n").split("\t")
    if len(f) == 7:
        expect[tuple(f[:3])] = os.path.join(os.path.dirname(cells), f[6])


def max_ref(name, opset, shape):
    path = expect.get((name, opset, shape))
    return f"{np.abs(np.load(path)).max():.3g}" if path and os.path.exists(path) else "?"


current = {tuple(line.split("\t")[:3]) for line in open(cells) if line.strip()}
rows = {}  # (name, opset) -> [(shape, status, detail)], of the current cells only
for line in open(results):
    name, opset, shape, status, detail, _ = line.rstrip("\n").split("\t")
    if (name, opset, shape) not in current:
        continue
    rows.setdefault((name, opset), []).append((shape, status, detail))
out = ["| model | opset | input shapes | result |", "|---|---|---|---|"]
for name in order:
    for (n, opset), cells_ in sorted(rows.items(), key=lambda kv: kv[0][1]):
        if n != name:
            continue
        statuses = {s for _, s, _ in cells_}
        if statuses == {"pass"}:
            errors = [f"{re.search(r'max abs error ([^,]+)', d).group(1)} of max {max_ref(name, opset, shape)}"
                      for shape, _, d in cells_]
            result = f"pass (max abs error {', '.join(errors)})"
        elif statuses == {"export"}:
            result = f"not exported (torch.onnx): {cells_[0][2]}"
        elif statuses == {"skip"}:
            result = f"not run: {cells_[0][2]}"
        else:
            result = "; ".join(f"{shape}: {status} ({detail})" for shape, status, detail in cells_)
        shapes = ", ".join(s for s, _, _ in cells_ if s != "-") or "-"
        out.append(f"| {name} | {opset} | {shapes} | {result.replace('|', '/')} |")
    if not any(n == name for n, _ in rows):
        out.append(f"| {name} | - | - | not run yet (made, not checked) |")
for name in open(all_models).read().split():
    if name not in order:
        out.append(f"| {name} | - | - | not run yet (not made) |")
open(table, "w").write("\n".join(out) + "\n")
counts = {}
for cells_ in rows.values():
    for _, s, _ in cells_:
        counts[s] = counts.get(s, 0) + 1
print("tv_zoo_check: cells:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
EOF
