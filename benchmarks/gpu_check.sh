#!/usr/bin/env bash
# The device check: runs every model of ../shared/models on the GPU at the three
# reference shapes, checks each output against PyTorch's reference (rtol 1e-3),
# and, where the machine has PyTorch with CUDA, times disco against PyTorch
# eager at the same shapes. See benchmarks/README.md.
#
#   benchmarks/gpu_check.sh --prepare [--build DIR] [--models DIR] [--dir OUT]
#       here, on the build machine: compiles each model (--targets cublas,host, and
#       the cuda backend's set when this disco has it) into OUT (default
#       build/gpu_check): the plans, the small gpu_check_runner (runtime and cuBLAS
#       glue, no Halide), its libgomp, the references and PyTorch's model code.
#       Stays under 64 MiB (the carry limit); prints what to carry.
#   benchmarks/gpu_check.sh [--dir OUT] [--runs N]
#       on the GPU machine: builds nothing, runs everything in OUT. Prints a
#       markdown table and writes it to $OUT_DIR/gpu-<date>.md ($OUT_DIR, else
#       $OUT when set). Finishes within 8 minutes: every step's timeout fits in 7.5.
#       Exit status: 0 all checks pass, 1 a mismatch or an error, 2 no GPU.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/build/gpu_check"
BUILD="$ROOT/build"
MODELS="$ROOT/../shared/models"
RUNS=20
PREPARE=0
# The device tool carries the working tree and this folder together, 64 MiB in all:
# the folder's budget is what the tracked files leave, less 1 MiB of slack.
budget_mib() {
  local tracked
  tracked=$(git -C "$ROOT" ls-files -z 2>/dev/null | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  echo $(( 63 - ${tracked:-0} / 1048576 ))
}
# The references travel in the tree (tests/references), not in the folder.
REFS="$ROOT/tests/references"
HOST_TARGET="${DISCO_GPU_CHECK_HOST_TARGET:-x86-64-linux-avx2}"             # the GPU machine's CPU is unknown
CUDA_TARGET="${DISCO_GPU_CHECK_CUDA_TARGET:-x86-64-linux-avx2-cuda-cuda_capability_80}"
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare) PREPARE=1 ;;
    --dir) DIR="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift ;;
    --build) BUILD="$(cd "$2" && pwd)"; shift ;;
    --models) MODELS="$(cd "$2" && pwd)"; shift ;;
    --runs) RUNS="$2"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# convnet_bn shares convnet's weights and references.
ref_name() { [ "$1" = convnet_bn ] && echo convnet || echo "$1"; }

# ---------------------------------------------------------------------------
# --prepare: on the build machine
# ---------------------------------------------------------------------------
prepare_set() {  # SET TARGETS_ARGS... : compiles every model, copies each plan into $DIR/plans/SET/MODEL
  local set="$1"; shift
  local m name ref input log cache_dir
  for m in "$MODELS"/*.onnx; do
    name="$(basename "$m" .onnx)"
    ref="$(ref_name "$name")"
    [ -f "$ROOT/tests/references/$ref.1.input.npy" ] || { echo "  $set/$name: no references in tests/references, skipped"; continue; }
    input="$("$DISCO" inspect "$m" 2>/dev/null | sed -n '/^inputs:/{n;s/^ *\([^:]*\):.*/\1/p;q}')"
    log="$(DISCO_CACHE_DIR="$DIR/.cache" nice -n 19 "$DISCO" run "$m" "$@" --verbose --threads 2 \
           --input "$input=$ROOT/tests/references/$ref.1.input.npy" 2>&1)"
    cache_dir="$(printf '%s\n' "$log" | sed -n 's/^  cache: //p' | head -1)"
    if [ -z "$cache_dir" ] || [ ! -f "$cache_dir/plan.txt" ]; then
      echo "  $set/$name: not compiled: $(printf '%s\n' "$log" | grep -m1 'error' || printf '%s\n' "$log" | tail -1)"
      echo "$set/$name: not compiled: $(printf '%s\n' "$log" | grep -m1 'error')" >> "$DIR/notes.txt"
      continue
    fi
    mkdir -p "$DIR/plans/$set/$name"
    cp "$cache_dir"/* "$DIR/plans/$set/$name/"
    # The same weights in an earlier set: point the plan at that file instead of a second copy.
    local other
    for other in "$DIR"/plans/*/"$name"/constants.bin; do
      [ "$other" = "$DIR/plans/$set/$name/constants.bin" ] && continue
      if [ -f "$DIR/plans/$set/$name/constants.bin" ] && cmp -s "$other" "$DIR/plans/$set/$name/constants.bin"; then
        local rel="../../$(basename "$(dirname "$(dirname "$other")")")/$name/constants.bin"
        sed -i "1s|13:constants.bin|${#rel}:$rel|" "$DIR/plans/$set/$name/plan.txt"
        rm "$DIR/plans/$set/$name/constants.bin"
        break
      fi
    done
    # Random weights gzip by about 8%, enough to keep bert_layer in both sets.
    [ -f "$DIR/plans/$set/$name/constants.bin" ] && gzip -1 -k "$DIR/plans/$set/$name/constants.bin"
    local mib=$(( $(du -sb "$DIR" --exclude=.cache --exclude=constants.bin | cut -f1) / 1048576 ))
    if [ "$mib" -gt "$BUDGET_MIB" ]; then
      rm -rf "$DIR/plans/$set/$name"
      echo "  $set/$name: left out, over the ${BUDGET_MIB} MiB budget"
      echo "$set/$name: left out (over the ${BUDGET_MIB} MiB carry budget)" >> "$DIR/notes.txt"
      continue
    fi
    echo "  $set/$name: $(du -sh --exclude=constants.bin "$DIR/plans/$set/$name" | cut -f1) (${mib} MiB so far)"
  done
}

prepare() {
  [ -d "$MODELS" ] || { echo "gpu_check: no models folder $MODELS" >&2; exit 2; }
  BUDGET_MIB=$(budget_mib)
  if [ ! -f "$BUILD/build.ninja" ]; then
    nice -n 19 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 2
  fi
  nice -n 19 cmake --build "$BUILD" -j2 --target disco gpu_check_runner >/dev/null || { echo "gpu_check: build failed" >&2; exit 2; }
  DISCO="$BUILD/tools/disco"
  rm -rf "$DIR"
  mkdir -p "$DIR/bin" "$DIR/plans" "$DIR/torch"
  : > "$DIR/notes.txt"
  cp "$BUILD/benchmarks/gpu_check_runner" "$DIR/bin/"
  strip "$DIR/bin/gpu_check_runner" 2>/dev/null
  cp -L "$(${CXX:-c++} -print-file-name=libgomp.so.1)" "$DIR/bin/" || { echo "gpu_check: no libgomp.so.1" >&2; exit 2; }
  cp "$MODELS/make_models.py" "$DIR/torch/" 2>/dev/null || echo "no make_models.py: PyTorch timings off" >> "$DIR/notes.txt"
  echo "gpu_check: compiling into $DIR"
  prepare_set cublas --targets cublas,host --target "$HOST_TARGET"
  prepare_set cuda --target "$CUDA_TARGET"
  rm -rf "$DIR/.cache"
  rm -f "$DIR"/plans/*/*/constants.bin  # the .gz copies travel; run mode unpacks them
  date -u +%FT%TZ > "$DIR/prepared"
  git -C "$ROOT" rev-parse --short HEAD >> "$DIR/prepared" 2>/dev/null
  echo "gpu_check: $(du -sh "$DIR" | cut -f1) in $DIR; on the GPU machine, carry it and run:"
  echo "  benchmarks/gpu_check.sh --dir ${DIR#$ROOT/}"
  [ -s "$DIR/notes.txt" ] && { echo "notes:"; sed 's/^/  /' "$DIR/notes.txt"; }
  exit 0
}

[ "$PREPARE" = 1 ] && prepare

# ---------------------------------------------------------------------------
# run mode: on the GPU machine
# ---------------------------------------------------------------------------
START=$(date +%s)
LIMIT_S=450  # every timeout below fits in this, under 8 minutes in all
left() { echo $(( LIMIT_S - ($(date +%s) - START) )); }
cap() { local l; l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
[ -x "$DIR/bin/gpu_check_runner" ] || { echo "gpu_check: $DIR has no runner; run benchmarks/gpu_check.sh --prepare first" >&2; exit 2; }
RUNNER="$DIR/bin/gpu_check_runner"
for z in "$DIR"/plans/*/*/constants.bin.gz; do
  [ -f "$z" ] && { gunzip -f "$z" || { echo "gpu_check: cannot unpack $z" >&2; exit 1; }; }
done

# cuBLAS: the machine's own (CUDA toolkit, or PyTorch's nvidia-cublas wheel).
if [ -z "${DISCO_CUBLAS_LIBRARY:-}" ]; then
  for d in ${DISCO_CUDA_LIB_DIR:-} /usr/local/cuda/lib64 /usr/local/cuda-*/lib64 /usr/lib/x86_64-linux-gnu \
           $(timeout 45 python3 -c "import nvidia.cublas as m, os; print(' '.join(os.path.join(p, 'lib') for p in m.__path__))" 2>/dev/null); do
    f="$(ls "$d"/libcublas.so.1[123]* 2>/dev/null | sort -V | tail -1)"
    [ -n "$f" ] && { export DISCO_CUBLAS_LIBRARY="$f"; break; }
  done
fi

TORCH=""
if timeout 45 python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  TORCH="$(timeout 30 python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null)"
fi
[ -f "$DIR/torch/make_models.py" ] || TORCH=""

TABLE="$(mktemp)"; TORCH_OUT="$(mktemp)"
trap 'rm -f "$TABLE" "$TORCH_OUT"' EXIT
GPU="$(nvidia-smi -L 2>/dev/null | head -1)"
DEVICE="" NO_GPU="" NO_CUBLAS="" FAILED=0

MODEL_LIST=""
for p in "$DIR"/plans/*/*/plan.txt; do
  [ -f "$p" ] || continue
  n="$(basename "$(dirname "$p")")"
  case " $MODEL_LIST " in *" $n "*) ;; *) MODEL_LIST="$MODEL_LIST $n" ;; esac
done

if [ -n "$TORCH" ]; then
  specs=""; for n in $MODEL_LIST; do specs="$specs $n=$(ref_name "$n")"; done
  timeout "$(cap 150)" python3 "$ROOT/benchmarks/gpu_check_torch.py" --models-py "$DIR/torch" --refs "$REFS" \
    --runs "$RUNS" $specs > "$TORCH_OUT" 2>/dev/null || echo "gpu_check: PyTorch side stopped early" >&2
fi
torch_field() {  # MODEL K FIELD(4: ms, 5: worst)
  awk -F'\t' -v m="$1" -v k="$2" -v f="$3" '$1 == m && $2 == k { print $f; exit }' "$TORCH_OUT"
}

for planfile in "$DIR"/plans/*/*/plan.txt; do
  [ -f "$planfile" ] || continue
  plan="$(dirname "$planfile")"; name="$(basename "$plan")"; set="$(basename "$(dirname "$plan")")"
  ref="$(ref_name "$name")"
  if [ "$(left)" -lt 10 ]; then
    echo "| $name | $set | - | - | skipped: out of time | | | |" >> "$TABLE"; FAILED=1; continue
  fi
  if [ -n "$NO_GPU" ] || { [ -n "$NO_CUBLAS" ] && [ "$set" = cublas ]; }; then
    if [ -n "$NO_GPU" ]; then why="no GPU"; else why="no cuBLAS"; fi
    echo "| $name | $set | - | - | $why | | | |" >> "$TABLE"; continue
  fi
  args=()
  for k in 1 2 3; do args+=("$REFS/$ref.$k.input.npy" "$REFS/$ref.$k.output.npy"); done
  out="$(timeout "$(cap 120)" "$RUNNER" "$plan" --runs "$RUNS" "${args[@]}" 2>&1)"; rc=$?
  if [ "$rc" = 3 ]; then  # the device or cuBLAS is missing: the runner said which
    why="$(printf '%s\n' "$out" | sed -n 's/^no-gpu\t//p' | head -1)"
    case "$why" in  # the driver or the device is missing; else cuBLAS is (or is too new for the driver)
      *"CUDA driver library"*|*cuInit*|*"no CUDA device"*|*cuDevice*)
        NO_GPU="$why"; echo "| $name | $set | - | - | no GPU | | | |" >> "$TABLE" ;;
      *) NO_CUBLAS="$why"; echo "| $name | $set | - | - | no cuBLAS | | | |" >> "$TABLE" ;;
    esac
    FAILED=1; continue
  fi
  [ "$rc" = 0 ] || FAILED=1
  d="$(printf '%s\n' "$out" | sed -n 's/^device\t//p' | head -1)"; [ -n "$d" ] && DEVICE="$d"
  k=0
  while IFS=$'\t' read -r status shape ms worst maxabs; do
    case "$status" in
      ok|mismatch)
        k=$((k + 1))
        tms="$(torch_field "$name" "$k" 4)"; tworst="$(torch_field "$name" "$k" 5)"
        ratio=""
        if [ -n "$tms" ] && [ "$tms" != error ]; then ratio="$(awk -v a="$ms" -v b="$tms" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"; fi
        tcheck=""
        if [ "$tms" = error ]; then tcheck="error: $(printf '%s' "$tworst" | cut -c1-80)"; tms=""
        elif [ -n "$tworst" ]; then tcheck="$(awk -v w="$tworst" 'BEGIN { print (w + 0 <= 1 ? "ok" : "mismatch") }') ($tworst)"; fi
        echo "| $name | $set | $shape | $ms | $status ($worst, max abs $maxabs) | ${tms:-} | ${tcheck:-} | ${ratio:-} |" >> "$TABLE" ;;
      error)
        k=$((k + 1))
        echo "| $name | $set | $shape | - | error: $(printf '%s' "$ms $worst $maxabs" | cut -c1-160) | | | |" >> "$TABLE" ;;
    esac
  done <<< "$out"
  if [ "$k" = 0 ]; then
    echo "| $name | $set | - | - | runner failed (exit $rc): $(printf '%s' "$out" | tail -1 | cut -c1-160) | | | |" >> "$TABLE"
    FAILED=1
  fi
done

report() {
  echo "# GPU check $(date -u +%F)"
  echo
  echo "- machine: $(uname -n), $(nproc) cores; GPU: ${GPU:-none found by nvidia-smi}"
  echo "- disco device: ${DEVICE:-${NO_GPU:+no GPU: $NO_GPU}}"
  echo "- cuBLAS library: ${DISCO_CUBLAS_LIBRARY:-the dynamic loader default}${NO_CUBLAS:+; not usable: $NO_CUBLAS}"
  echo "- prepared: $(tr '\n' ' ' < "$DIR/prepared" 2>/dev/null); host code $HOST_TARGET; $RUNS timed runs, median"
  echo "- PyTorch eager: ${TORCH:-not available, no torch with CUDA here}; TF32 off"
  echo "- check: rtol 1e-3, atol 1e-4 against tests/references (PyTorch, CPU)"
  echo
  echo "| model | set | shape | disco ms | disco check (worst) | PyTorch ms | PyTorch check | disco / PyTorch |"
  echo "|---|---|---|---|---|---|---|---|"
  cat "$TABLE"
  if [ -s "$DIR/notes.txt" ]; then echo; echo "Notes from --prepare:"; sed 's/^/- /' "$DIR/notes.txt"; fi
  echo
  echo "Ran in $(( $(date +%s) - START )) s."
}
REPORT="$(report)"
printf '%s\n' "$REPORT"
DEST="${OUT_DIR:-${OUT:-}}"
if [ -n "$DEST" ]; then
  mkdir -p "$DEST" && printf '%s\n' "$REPORT" > "$DEST/gpu-$(date -u +%F).md" && echo "gpu_check: wrote $DEST/gpu-$(date -u +%F).md"
fi
if [ -n "$NO_GPU" ]; then echo "gpu_check: no GPU: $NO_GPU" >&2; exit 2; fi
exit "$FAILED"
