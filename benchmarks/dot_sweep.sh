#!/bin/bash
# Issue #20's sweep: `disco run` with the host backend alone against
# onednn,host, at 1 and 2 threads, on the bundled models and a UNet
# (benchmarks/make_unet.py, needs PyTorch), interleaved: each round runs every
# setting once (--repeat RUNS, median), rounds alternate the order, and each
# setting's time is the median over the rounds. Then an AOT bert_layer
# (host kernels, tests/driver/aot's harness) against `disco run` with its
# default backends, interleaved the same way. Prints markdown.
#
#   benchmarks/dot_sweep.sh [--build build] [--models ../shared/models] [--rounds 3] [--runs 10]
set -euo pipefail
build=build models=../shared/models rounds=3 runs=10
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dot_sweep.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
disco=$build/tools/disco
# The UNet is exported by PyTorch (Debian's python3-torch), installed here as run.sh installs npm.
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      python3-torch >/dev/null; } || echo "dot_sweep.sh: could not install python3-torch" >&2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=("mlp x=1x256" "mlp x=64x256" "bert_layer x=1x128x768" "bert_layer x=4x128x768" "bert_small4 x=2x64x256"
       "convnet x=4x3x96x96" "convnet x=3x3x40x56")
if /usr/bin/python3 "$(dirname "$0")/make_unet.py" "$tmp/unet.onnx" >/dev/null 2>&1; then
  cases+=("$tmp/unet.onnx x=2x8x48x64")
else
  echo "(no UNet: make_unet.py needs python3-torch)"
fi
model_path() { case "$1" in /*) echo "$1" ;; *) echo "$models/$1.onnx" ;; esac; }
time_one() {  # MODEL SHAPE TARGETS THREADS -> ms
  "$disco" run "$(model_path "$1")" --shape "$2" --targets "$3" --threads "$4" --repeat "$runs" 2>&1 |
    sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -1
}
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# Warm the compile cache so that no round pays a compile.
for c in "${cases[@]}"; do set -- $c; for t in host onednn,host; do time_one "$1" "$2" "$t" 1 >/dev/null; done; done
echo "| model | shape | threads | host ms | onednn,host ms | host / onednn,host |"
echo "|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
  set -- $c
  for th in 1 2; do
    : > "$tmp/h"; : > "$tmp/o"
    for r in $(seq "$rounds"); do
      if [ $((r % 2)) -eq 1 ]; then
        time_one "$1" "$2" host "$th" >> "$tmp/h"; time_one "$1" "$2" onednn,host "$th" >> "$tmp/o"
      else
        time_one "$1" "$2" onednn,host "$th" >> "$tmp/o"; time_one "$1" "$2" host "$th" >> "$tmp/h"
      fi
    done
    h=$(median < "$tmp/h"); o=$(median < "$tmp/o")
    printf '| %s | %s | %s | %s | %s | %.2f |\n' "$(basename "$1" .onnx)" "${2#x=}" "$th" "$h" "$o" "$(echo "$h / $o" | bc -l)"
  done
done
aot=$build/tests/driver/aot/aot_harness_bert_layer
if [ -x "$aot" ] && [ -f "$models/bert_layer.input.npy" ]; then
  echo
  echo "| AOT bert_layer (host kernels) | disco run (default backends) | AOT / run |"
  echo "|---|---|---|"
  : > "$tmp/a"; : > "$tmp/j"
  "$disco" run "$models/bert_layer.onnx" --input "x=$models/bert_layer.input.npy" >/dev/null 2>&1
  for r in $(seq "$rounds"); do
    "$aot" time "$models/bert_layer.input.npy" "$runs" | sed -n 's/median \([0-9.]*\) ms.*/\1/p' >> "$tmp/a"
    "$disco" run "$models/bert_layer.onnx" --input "x=$models/bert_layer.input.npy" --repeat "$runs" 2>&1 |
      sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' >> "$tmp/j"
  done
  a=$(median < "$tmp/a"); j=$(median < "$tmp/j")
  printf '| %s ms | %s ms | %.2f |\n' "$a" "$j" "$(echo "$a / $j" | bc -l)"
fi
