#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
cd ..
# Fuzz smoke (issue #23): each libFuzzer target for 30 s under ASan+UBSan, in
# build-fuzz/ (clang-14; what the targets link, and disco for fuzz_aot_entry's
# library; times in docs/reliability.md), seed 1 so that a run is repeatable.
# DISCO_FUZZ_SMOKE=0 skips it.
if [ "${DISCO_FUZZ_SMOKE:-1}" != 0 ]; then
  for t in fuzz_onnx_import fuzz_npy fuzz_plan_cache fuzz_aot_entry; do
    DISCO_FUZZ_JOBS="$(nproc)" tools/fuzz.sh "$t" 30 -seed=1
  done
fi
# Sanitizer tests (issue #23): unit tests and a conformance subset under
# ASan+UBSan, in the same build-fuzz/ (tools/sanitize_tests.sh).
# DISCO_SANITIZE_TESTS=0 skips them.
if [ "${DISCO_SANITIZE_TESTS:-1}" != 0 ]; then
  DISCO_SANITIZE_JOBS="$(nproc)" tools/sanitize_tests.sh
fi
