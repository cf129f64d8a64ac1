#!/usr/bin/env bash
# The CPU benchmark: builds disco, installs the pinned ONNX Runtime peer
# (benchmarks/peers/package.json) and runs the harness, which times disco
# (dynamic and static compiles) and ONNX Runtime interleaved at 1 and 2
# threads over the sweep shapes, plus a STREAM copy. The table goes to stdout
# and to benchmarks/results/cpu-<date>.md, with a chart of disco / ONNX Runtime
# time per model and shape at 1 and 2 threads beside it (cpu-<date>.png, drawn
# by benchmarks/plot_results.py with python3-matplotlib; the table embeds it;
# benchmarks/plot_results_report.sh writes both).
# Extra arguments go to the harness (see build/benchmarks/harness --help), e.g.
# --only bert_layer --runs 30.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/build.sh
if ! command -v npm >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ ! -d benchmarks/peers/node_modules/onnxruntime-node ]; then
  # --ignore-scripts: the package's install script fetches GPU binaries, which fails offline; the CPU binary ships in it.
  (cd benchmarks/peers && npm install --ignore-scripts --no-audit --no-fund)
fi

if [ ! -d ../shared/models ]; then
  echo "benchmarks/run.sh: ../shared/models not found; the sweep needs its models" >&2
  exit 1
fi
out="benchmarks/results/cpu-$(date +%F).md"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
build/benchmarks/harness --out "$tmp" "$@"
# The report and its chart (benchmarks/plot_results_report.sh; $PYTHON, else /usr/bin/python3, draws it).
machine="Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;"
ort="ONNX Runtime $(node -p "require('./benchmarks/peers/node_modules/onnxruntime-node/package.json').version") (onnxruntime-node)."
benchmarks/plot_results_report.sh "$tmp" "$out" "CPU benchmark, $(date +%F)" "$machine $ort Command: \`benchmarks/run.sh $*\`"
