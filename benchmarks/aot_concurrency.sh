#!/bin/bash
# Issue #22's concurrency table: an AOT library's throughput (runs per second of
# the whole process) with 1, 2 and 4 threads calling NAME_run at once, on the
# bundled models at their largest reference input (tests/references/*.3.*;
# tests/driver/aot's harness: `harness throughput IN CALLERS RUNS`, a warm-up
# run per caller first), at Halide thread pools of 1 and 2 (HL_NUM_THREADS).
# RUNS per caller makes about --seconds at one caller (measured first). Each
# round runs every setting once, rounds alternate the order, and each
# setting's number is the median over the rounds. Prints markdown.
#
#   benchmarks/aot_concurrency.sh [--build build] [--rounds 3] [--seconds 0.4] [--models "convnet layernorm_softmax"]
set -euo pipefail
build=build rounds=3 seconds=0.4 models="convnet layernorm_softmax"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "aot_concurrency.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
refs=tests/references
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
settings=()
for pool in 1 2; do
  for callers in 1 2 4; do settings+=("$pool $callers"); done
done
for model in $models; do
  harness=$build/tests/driver/aot/aot_harness_$model
  [ -x "$harness" ] || { echo "aot_concurrency.sh: $harness is not built" >&2; exit 1; }
  rate=$("$harness" throughput "$refs/$model.3.input.npy" 1 20 | sed -n 's/.*: \([0-9.]*\) runs\/s.*/\1/p')
  runs=$(awk -v r="$rate" -v s="$seconds" 'BEGIN {n = int(r * s); print n < 20 ? 20 : n}')
  echo "$runs" > "$tmp/$model.runs"
  for ((r = 0; r < rounds; ++r)); do
    order=("${settings[@]}")
    if ((r % 2)); then order=(); for ((i = ${#settings[@]} - 1; i >= 0; --i)); do order+=("${settings[i]}"); done; fi
    for s in "${order[@]}"; do
      set -- $s
      HL_NUM_THREADS=$1 "$harness" throughput "$refs/$model.3.input.npy" "$2" "$runs" |
        sed -n 's/.*: \([0-9.]*\) runs\/s.*/\1/p' >> "$tmp/$model.$1.$2"
    done
  done
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "| model | input | runs per caller | Halide threads | 1 caller (runs/s) | 2 callers | 4 callers | 2 vs 1 | 4 vs 1 |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for model in $models; do
  shape=$(/usr/bin/python3 -c "import numpy; print(list(numpy.load('$refs/$model.3.input.npy').shape))" 2>/dev/null || echo "?")
  for pool in 1 2; do
    a=$(median "$tmp/$model.$pool.1") b=$(median "$tmp/$model.$pool.2") c=$(median "$tmp/$model.$pool.4")
    awk -v m="$model" -v s="$shape" -v n="$(cat "$tmp/$model.runs")" -v p="$pool" -v a="$a" -v b="$b" -v c="$c" \
      'BEGIN {printf "| %s | %s | %d | %d | %.1f | %.1f | %.1f | %.2fx | %.2fx |\n", m, s, n, p, a, b, c, b / a, c / a}'
  done
done
