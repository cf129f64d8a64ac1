#!/bin/bash
# Issue #22's speed table: each bundled model compiled by `disco compile` with
# the backends `disco run` uses by default (onednn,host), against the JIT
# (`disco bench`), at the sweep shapes (benchmarks/harness.cc's kSweep) and at 1
# and 2 threads (NAME_set_num_threads / --threads). Inputs are seeded noise.
# Both sides are timed alike: untimed runs for WARMUP s, then timed runs for
# SECONDS s (at least 10), the median of those (the AOT side through the test
# harness's `bench` mode, the JIT side by `disco bench --warmup --seconds`).
# Each round runs both once, rounds alternate which goes first, and each side's
# time is the median over the rounds; the last column is the median of each
# round's AOT/JIT ratio (paired, so slow drift cancels). Prints markdown.
#
#   benchmarks/aot_vs_jit.sh [--build build] [--models ../shared/models] [--rounds 3] [--warmup 0.3] [--seconds 1] [--threads 1,2]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build models=../shared/models rounds=3 warmup=0.3 seconds=1 threads=1,2
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "aot_vs_jit.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
disco=$PWD/$build/tools/disco
[ -x "$disco" ] || { echo "aot_vs_jit.sh: $disco not built" >&2; exit 1; }
[ -d "$models" ] || { echo "aot_vs_jit.sh: $models not found (the bundled models)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DISCO_CACHE_DIR=$tmp/cache
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# name and shapes, as kSweep has them
sweep=("mlp 1x256 16x256 256x256" "bert_layer 1x32x768 1x128x768 4x128x768 8x384x768"
       "bert_small4 1x64x256 8x128x256" "convnet 1x3x64x64 8x3x128x128" "layernorm_softmax 1x128x768 16x512x768")
echo "Command: \`benchmarks/aot_vs_jit.sh $*\` at $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d); load at the start $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores."
echo
echo "| model | shape | threads | AOT ms | JIT (disco bench) ms | AOT / JIT (of the medians) | AOT / JIT (median of the rounds' ratios) |"
echo "|---|---|---|---|---|---|---|"
for line in "${sweep[@]}"; do
  read -r name shapes <<< "$line"
  [ -f "$models/$name.onnx" ] || continue
  "$disco" compile "$models/$name.onnx" -o "$tmp/$name/lib_$name" --targets onednn,host --quiet
  cat > "$tmp/$name/main.cc" <<CC
#define DISCO_AOT_NAME lib_$name
#define DISCO_AOT_HEADER "lib_$name.h"
#include "$PWD/tests/driver/aot/aot_harness.cc"
CC
  g++ -O2 -std=c++17 -I"$tmp/$name" -I"$PWD/tests/driver/aot" "$tmp/$name/main.cc" -o "$tmp/$name/harness" \
    $(PKG_CONFIG_PATH="$tmp/$name" pkg-config --libs "lib_$name")
  for shape in $shapes; do
    in=$tmp/$name/$shape.npy
    /usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(7).standard_normal([int(d) for d in sys.argv[2].split('x')]).astype(np.float32))" "$in" "$shape"
    "$disco" run "$models/$name.onnx" --input "x=$in" >/dev/null  # compiles into the cache once
    for th in ${threads//,/ }; do
      : > "$tmp/a"; : > "$tmp/j"; : > "$tmp/r"
      for r in $(seq "$rounds"); do
        aot() { "$tmp/$name/harness" bench "$in" "$warmup" "$seconds" "$th" | sed -n 's/median \([0-9.]*\) ms.*/\1/p' >> "$tmp/a"; }
        jit() { "$disco" bench "$models/$name.onnx" --input "x=$in" --warmup "$warmup" --seconds "$seconds" --threads "$th" 2>&1 |
                  sed -n 's/.* p50 \([0-9.]*\) .*/\1/p' >> "$tmp/j"; }
        if [ $((r % 2)) -eq 1 ]; then aot; jit; else jit; aot; fi
        # This round's ratio, of two runs seconds apart: a drift of the VM
        # over minutes moves both of its sides alike.
        echo "$(tail -1 "$tmp/a") / $(tail -1 "$tmp/j")" | bc -l >> "$tmp/r"
      done
      a=$(median < "$tmp/a"); j=$(median < "$tmp/j"); ratio=$(median < "$tmp/r")
      printf '| %s | %s | %s | %s | %s | %.2f | %.2f |\n' "$name" "$shape" "$th" "$a" "$j" "$(echo "$a / $j" | bc -l)" "$ratio"
    done
  done
done
