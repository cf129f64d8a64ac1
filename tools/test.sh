#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time, printed at the end (a failure or CI's time limit
# included), so that a slow run's log says where its time went.
start=$(date +%s) last=$(date +%s) times=()
step_done() {
  local now; now=$(date +%s)
  times+=("$1 $((now - last)) s"); last=$now
  echo "test.sh: $1 done at $((now - start)) s"
}
trap 'echo "test.sh: $(printf "%s; " "${times[@]}")$(( $(date +%s) - start )) s in all"' EXIT
trap 'exit 143' TERM INT
tools/build.sh
step_done "build:"
(cd build && ctest --output-on-failure -j "$(nproc)" "$@")
step_done "ctest:"
# Fuzz smoke (issue #23): each libFuzzer target for 15 s under ASan+UBSan, in
# build-fuzz/ (clang-14; what the targets link, and disco for fuzz_aot_entry's
# library; times in docs/reliability.md), seed 1 so that a run is repeatable.
# DISCO_FUZZ_SMOKE=0 skips it.
if [ "${DISCO_FUZZ_SMOKE:-1}" != 0 ]; then
  for t in fuzz_onnx_import fuzz_npy fuzz_plan_cache fuzz_aot_entry; do
    DISCO_FUZZ_JOBS="$(nproc)" tools/fuzz.sh "$t" 15 -seed=1
  done
  step_done "fuzz smoke:"
fi
# Sanitizer tests (issue #23): unit tests and a conformance subset under
# ASan+UBSan, in the same build-fuzz/ (tools/sanitize_tests.sh).
# DISCO_SANITIZE_TESTS=0 skips them.
if [ "${DISCO_SANITIZE_TESTS:-1}" != 0 ]; then
  DISCO_SANITIZE_JOBS="$(nproc)" tools/sanitize_tests.sh
  step_done "sanitizer tests:"
fi
