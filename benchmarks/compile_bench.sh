#!/usr/bin/env bash
# Issue #26's compile-time table: for each model, the cold compile (an empty
# compile cache), its plan steps, Halide kernels and unique kernels (those
# compiled), the phases of `disco run --verbose`'s compile profile (import,
# shape inference, the kernels' compile on every core (wall), Halide lowering
# and LLVM codegen summed over kernels, linking), and the warm start (the same
# compile again, a cache hit), with the time to parse the model apart, and the
# time to a ready session on that warm start (`disco run --verbose`'s "session
# ready": the cache hit plus loading the kernel library and the constants).
# Models: the bundled five (../shared/models, when present) and one shape of
# each model of the zoo sweep (benchmarks/zoo_sweep.sh's zoo.txt, when given).
#
#   benchmarks/compile_bench.sh [--build DIR] [--zoo DIR] [--threads N] [--out FILE]
#
# --build: a build folder with tools/disco (default build); --zoo: a folder
# with zoo.txt and its models (as zoo_sweep.sh --cache leaves it: DIR/<hash>);
# --out: the Markdown table (default: stdout). The compiles share one private
# cache folder, removed afterwards; a model's cold compile is its first (a
# cache miss), its warm start the second. Halide's runtime object is made once
# per cache folder, before the first model (as a user's cache holds it). The
# cold compile starts with an empty kernel store (targets/kernel_store.h); the
# "after the models above" compile is the same cache miss with the store the
# models above it in the table left, and says how many of its kernels came
# from there. The machine's load is printed with the table: compile times
# move with it.
set -euo pipefail
cd "$(dirname "$0")/.."

command_line="$*" build=build zoo="" out="" threads=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --zoo) zoo=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compile_bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
disco="$PWD/$build/tools/disco"
[ -x "$disco" ] || { echo "compile_bench.sh: $disco not built (cmake --build $build --target disco)" >&2; exit 1; }

# Lines of "NAME DIR ARGS...": the model and the `disco run` arguments of one shape.
cases=()
if [ -d ../shared/models ]; then
  for m in mlp bert_layer bert_small4 convnet layernorm_softmax; do
    [ -f "../shared/models/$m.onnx" ] && cases+=("$m $(cd ../shared/models && pwd) $m.onnx --input x=$m.input.npy")
  done
fi
if [ -n "$zoo" ]; then
  zoo=$(cd "$zoo" && pwd)
  seen=" "
  while read -r name model rest; do
    case "$name" in \#*|"") continue ;; esac
    case "$seen" in *" $name "*) continue ;; esac
    seen="$seen$name "
    cases+=("$name $zoo $model ${rest%%--expect*}")
  done < "$zoo/zoo.txt"
fi

table=$(mktemp)
cache=$(mktemp -d)
trap 'rm -rf "$table" "$cache"' EXIT
# Halide's runtime object, made once per cache folder: the bundled layernorm_softmax's compile
# (one kernel) leaves it there; its own cache entry is removed so it is timed cold below.
DISCO_CACHE_DIR="$cache" "$disco" run examples/models/layernorm_softmax.onnx --shape x=2x8x768 >/dev/null 2>&1 ||
  echo "compile_bench: the warm-up compile failed; the first model pays for the runtime object" >&2
find "$cache" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
{
  echo "Command: \`benchmarks/compile_bench.sh $command_line\` at $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d)."
  echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores."
  echo
  echo "| model | steps | Halide kernels | unique kernels | cold compile s | import s | shape inference s | kernel compile s (wall) | Halide lowering s (sum) | LLVM codegen s (sum) | Halide runtime s | linking s | after the models above s (kernels from the store) | warm start s (import + cache hit) | warm start to a ready session s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
for c in "${cases[@]}"; do
  read -r name dir args <<< "$c"
  run() { (cd "$dir" && DISCO_CACHE_DIR="$cache" "$disco" run $args --verbose ${threads:+--threads $threads} 2>&1); }
  # Cold: the kernel store the models above left is set aside, and what this compile adds to it dropped.
  aside=$(mktemp -d)
  find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'kernels-*' -exec mv {} "$aside"/ \;
  cold=$(run) || { echo "| $name | failed: $(echo "$cold" | tail -1) |" >> "$table"; rm -rf "$aside"; continue; }
  find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name sources -exec rm -rf {} +
  find "$aside" -mindepth 1 -maxdepth 1 -exec mv {} "$cache"/ \;
  rmdir "$aside"
  shared=$(run)
  warm=$(run)
  field() { echo "$1" | sed -n "s/^ *$2 *\([0-9.]*\) s.*/\1/p" | head -1; }
  line=$(echo "$cold" | grep '^compile:')
  secs=$(echo "$line" | sed 's/compile: \([0-9.]*\) s.*/\1/')
  steps=$(echo "$line" | sed 's/.*(\([0-9]*\) steps.*/\1/')
  kernels=$(echo "$line" | sed 's/.*steps, \([0-9]*\) Halide.*/\1/')
  unique=$(echo "$cold" | sed -n 's/.*kernel compile .*, \([0-9]*\) unique.*/\1/p' | head -1)
  wsecs=$(echo "$warm" | grep '^compile:' | sed 's/compile: \([0-9.]*\) s.*/\1/')
  wimport=$(echo "$warm" | sed -n 's/^ *import: \([0-9.]*\) s.*/\1/p')
  warm_total=$(awk -v a="$wsecs" -v b="$wimport" 'BEGIN { printf "%.3f (%.3f + %.3f)", a + b, b, a }')
  ready=$(echo "$warm" | sed -n 's/^ *session ready: \([0-9.]*\) s.*/\1/p')
  ssecs=$(echo "$shared" | grep '^compile:' | sed 's/compile: \([0-9.]*\) s.*/\1/')
  stored=$(echo "$shared" | sed -n 's/.*kernel compile .*unique, \([0-9]*\) from the kernel cache.*/\1/p' | head -1)
  echo "| $name | $steps | $kernels | ${unique:-0} | $secs | $(field "$cold" import) | $(field "$cold" 'shape inference') | $(field "$cold" 'kernel compile') | $(field "$cold" 'Halide lowering') | $(field "$cold" 'LLVM codegen') | $(field "$cold" 'Halide runtime') | $(field "$cold" linking) | $ssecs (${stored:-0} of ${unique:-0}) | $warm_total | ${ready:-?} |" >> "$table"
  echo "compile_bench: $name cold $secs s, warm $warm_total s, ready ${ready:-?} s" >&2
done
if [ -n "$out" ]; then cp "$table" "$out"; else cat "$table"; fi
