#!/usr/bin/env bash
# Builds and runs one libFuzzer target of fuzz/ (issue #23).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/fuzz.sh TARGET SECONDS [LIBFUZZER_ARGS...]
       tools/fuzz.sh --build-only | --configure-only
Runs fuzz/TARGET (fuzz_onnx_import, fuzz_npy, fuzz_plan_cache, fuzz_aot_entry) for SECONDS
(-max_total_time) on a seed corpus, then prints its executions, coverage and
findings. Builds build-fuzz/ first when needed (clang-14, -DDISCO_FUZZ=ON,
-DDISCO_SANITIZE=address,undefined; only what the targets link, and for
fuzz_aot_entry the disco compiler that makes its library),
installing clang-14 and libfuzzer-14-dev when missing.
Corpus: /tmp/disco-fuzz/TARGET/corpus (kept between runs, seeded from
../shared/models, the ONNX node tests and the compile cache); findings:
/tmp/disco-fuzz/TARGET/artifacts. Exit status 1 when a run found something.
LIBFUZZER_ARGS go to the target, e.g. -fork=1 -ignore_crashes=1 -ignore_timeouts=1
-ignore_ooms=1 to go on past findings (each is still saved and reported).
Environment: DISCO_FUZZ_DIR (default /tmp/disco-fuzz), DISCO_FUZZ_JOBS (-j, default 2),
DISCO_FUZZ_BUILD_DIR (default build-fuzz),
DISCO_FUZZ_ALLOW_STD=1 (go on past non-disco exceptions, see fuzz/fuzz_guard.h).
USAGE
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${DISCO_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
TARGETS=(fuzz_onnx_import fuzz_npy fuzz_plan_cache fuzz_aot_entry)

# Packages, as tools/setup.sh does: silent when present.
missing=()
for p in clang-14 libfuzzer-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# -O0 with line tables only: ASan's reports keep file and line, and a cold
# build compiles in about a quarter of -O2 -g's time (onednn_conv.cc: 12.2 s ->
# 3.2 s; -O1 7.9 s): the sanitizer tests' executables, disco and
# disco_conformance in 242 s on 2 cores. The build was most of what this job
# cost a CI run whose compile cache is cold. The tests run on Halide's and
# oneDNN's compiled code, so -O0 slows them little (one exception in
# tools/sanitize_tests.sh); the 30 s fuzz smoke runs fewer inputs.
OPT="-O0 -gline-tables-only -DNDEBUG"
if [ ! -f "$BUILD/build.ninja" ] || ! grep -qxF "CMAKE_CXX_FLAGS_RELWITHDEBINFO:STRING=$OPT" "$BUILD/CMakeCache.txt"; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$OPT" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$OPT" \
    -DDISCO_FUZZ=ON -DDISCO_SANITIZE=address,undefined \
    -DDISCO_BUILD_TESTS=ON -DDISCO_BUILD_BENCHMARKS=OFF >/dev/null
fi
# Tests are configured (not built) so that tools/sanitize_tests.sh builds the
# ones it runs in this same folder, on the same libraries.
[ "$1" = "--configure-only" ] && exit 0
if [ "$1" = "--build-only" ]; then
  cmake --build "$BUILD" -j "${DISCO_FUZZ_JOBS:-2}" --target "${TARGETS[@]}"
  exit 0
fi

[ $# -ge 2 ] || { usage >&2; exit 2; }
TARGET="$1"; SECONDS_TO_RUN="$2"; shift 2
[[ " ${TARGETS[*]} " == *" $TARGET "* ]] || { echo "fuzz: unknown target '$TARGET' (${TARGETS[*]})" >&2; exit 2; }
WORK="${DISCO_FUZZ_DIR:-/tmp/disco-fuzz}/$TARGET"
CORPUS="$WORK/corpus"; ART="$WORK/artifacts"
mkdir -p "$CORPUS" "$ART"
if ! cmake --build "$BUILD" -j "${DISCO_FUZZ_JOBS:-2}" --target "$TARGET" >"$WORK/build.log" 2>&1; then
  tail -30 "$WORK/build.log" >&2
  echo "fuzz: $TARGET did not build (log $WORK/build.log)" >&2
  exit 1
fi

# Seeds: copied (not linked: libFuzzer writes into the corpus), never committed.
seed() { local f="$1" name="$2"; [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 1048576 ] && cp -n "$f" "$CORPUS/$name" || true; }
SHARED="$ROOT/../shared/models"
NODE=/usr/share/libonnx-testdata/data/node
CACHE="${DISCO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/disco}"
if [ -z "$(ls -A "$CORPUS")" ]; then
  case "$TARGET" in
    fuzz_onnx_import)
      for f in "$SHARED"/*.onnx; do seed "$f" "$(basename "$f")"; done
      # Every 4th node test: ~230 models over every op family.
      i=0
      for d in "$NODE"/*/; do
        [ $((i++ % 4)) -eq 0 ] && seed "$d/model.onnx" "$(basename "$d").onnx"
      done ;;
    fuzz_npy)
      for f in "$SHARED"/*.npy; do seed "$f" "$(basename "$f")"; done ;;
    fuzz_plan_cache)
      i=0
      for f in "$CACHE"/*/plan.txt "$CACHE"/*/manifest.txt; do
        [ $((i++)) -lt 60 ] && seed "$f" "$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    fuzz_aot_entry)
      # FuzzedDataProvider reads bytes below 150 as buffers as declared (fuzz_aot_entry.cc).
      for n in 4 17 32 64; do head -c 512 /dev/zero | tr '\000' "\\$(printf %03o "$n")" >"$CORPUS/seed-$n"; done ;;
  esac
  # A corpus is never empty: libFuzzer starts from nothing otherwise.
  [ -n "$(ls -A "$CORPUS")" ] || printf 'x' >"$CORPUS/empty-seed"
fi
echo "fuzz: $TARGET for ${SECONDS_TO_RUN}s, corpus $CORPUS ($(ls "$CORPUS" | wc -l) files)"

LOG="$WORK/last.log"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
MARK="$WORK/.run-start"
touch "$MARK"
set +e
"$BUILD/fuzz/$TARGET" "$CORPUS" -max_total_time="$SECONDS_TO_RUN" -timeout=25 -rss_limit_mb=4096 \
  -malloc_limit_mb=2048 -artifact_prefix="$ART/" -print_final_stats=1 "$@" >"$LOG" 2>&1
rc=$?
set -e

# libFuzzer's last status line: "#N ... cov: C ft: F corp: ... exec/s: E".
last=$(grep -E '^#[0-9]+' "$LOG" | tail -1 || true)
echo "fuzz: $TARGET exit $rc; last status: ${last:-none}"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$LOG" | sed 's/^/fuzz:   /' || true
# With -fork=N -ignore_crashes=1 libFuzzer goes on past findings and exits 0:
# what it wrote into the artifacts folder during this run is what it found.
# A slow-unit-* input only took longer than -report_slow_units (10 s) on a
# busy machine; a hang is a timeout-* (-timeout=25), which is a finding.
slow=$(find "$ART" -type f -name 'slow-unit-*' -newer "$MARK" | sort)
[ -n "$slow" ] && echo "fuzz: slow inputs (over 10 s, under the 25 s timeout; not findings): $slow"
new=$(find "$ART" -type f ! -name 'slow-unit-*' -newer "$MARK" | sort)
if [ $rc -ne 0 ] || [ -n "$new" ]; then
  echo "fuzz: FINDING (log $LOG):"
  grep -E 'ERROR: |fuzz finding|SUMMARY|Test unit written|runtime error' "$LOG" | sort -u | head -20
  [ -n "$new" ] && echo "fuzz: inputs written: $new"
  exit 1
fi
echo "fuzz: no findings"
