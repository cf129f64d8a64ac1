#!/usr/bin/env bash
# Issue #21's broad sweep: the models of benchmarks/make_zoo.py (torchvision
# CNNs and segmentation models, transformer blocks, recurrent taggers; random
# weights) against ONNX Runtime at 1 and 2 threads, disco's dynamic compile
# only, each cell's output checked against PyTorch's first. Installs
# python3-torch and python3-torchvision with apt when missing, builds disco
# (tools/build.sh), installs the ONNX Runtime peer (as run.sh does), makes the
# zoo in build/zoo/<hash of make_zoo.py> (reused while the script is
# unchanged), and writes benchmarks/results/zoo-<date>.md.
#
#   benchmarks/zoo_sweep.sh [--unseen] [--only NAME]... [--runs N] [--threads 1,2] [--build DIR] [--cache DIR]
#                           [--out FILE]
#
# --unseen sweeps make_zoo.py's unseen list instead (torchvision models outside
# the zoo, not part of #21's bar; results/unseen-<date>.md by default).
# --only names a model of `benchmarks/make_zoo.py --list` (repeatable); --runs,
# --threads and --targets go to the harness. --build DIR: a build folder with
# benchmarks/harness built already (skips tools/build.sh); --cache DIR: where
# the zoo is kept instead of build/zoo; --out FILE: the result file instead of
# benchmarks/results/zoo-<date>.md (say, one per subset of a day's runs).
set -euo pipefail
cd "$(dirname "$0")/.."

command_line="$*" build="" cache=build/zoo out="" only=() harness_args=() list=zoo list_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --unseen) list=unseen list_args=(--unseen); shift ;;
    --only) only+=("$2"); shift 2 ;;
    --build) build=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --runs|--threads|--targets) harness_args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "zoo_sweep.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    python3-torch python3-torchvision >/dev/null
fi
if [ -z "$build" ]; then
  tools/build.sh
  build=build
fi
if ! command -v npm >/dev/null; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ ! -d benchmarks/peers/node_modules/onnxruntime-node ]; then
  # --ignore-scripts: the package's install script fetches GPU binaries, which fails offline; the CPU binary ships in it.
  (cd benchmarks/peers && npm install --ignore-scripts --no-audit --no-fund)
fi

# The zoo: made once per version of make_zoo.py (--keep reuses the models already there).
zoo="$cache/$([ "$list" = unseen ] && echo unseen-)$(sha256sum benchmarks/make_zoo.py | cut -c1-12)"
mkdir -p "$zoo"
only_args=()
[ ${#only[@]} -gt 0 ] && only_args=(--only "${only[@]}")
# A model that fails to export gets a comment in zoo.txt instead of its lines; the sweep goes on without it.
rm -f "$zoo/zoo.txt"
nice -n 10 /usr/bin/python3 benchmarks/make_zoo.py "$zoo" --keep "${list_args[@]}" "${only_args[@]}" ||
  echo "zoo_sweep.sh: make_zoo.py could not export every model (see above)" >&2
[ -s "$zoo/zoo.txt" ] || { echo "zoo_sweep.sh: make_zoo.py wrote no $zoo/zoo.txt" >&2; exit 1; }

[ -n "$out" ] || out="benchmarks/results/$list-$(date +%F).md"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
"$build/benchmarks/harness" --sweep "$zoo/zoo.txt" --check --skip-static --out "$tmp" "${harness_args[@]}"
{
  if [ "$list" = unseen ]; then
    echo "# Models outside the zoo against ONNX Runtime (make_zoo.py --unseen; not #21's bar), $(date +%F)"
  else
    echo "# Model zoo against ONNX Runtime (issue #21), $(date +%F)"
  fi
  echo
  echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
       "ONNX Runtime $(node -p "require('./benchmarks/peers/node_modules/onnxruntime-node/package.json').version")" \
       "(onnxruntime-node); PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')," \
       "torchvision $(/usr/bin/python3 -c 'import torchvision; print(torchvision.__version__)');" \
       "disco at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!benchmarks/results' || echo ' (with local changes)')." \
       "Command: \`benchmarks/zoo_sweep.sh $command_line\`"
  grep '^# .*: export failed: ' "$zoo/zoo.txt" | sed 's/^# /\nNot exported: /' || true
  echo
  cat "$tmp"
} > "$out"
echo "wrote $out"
