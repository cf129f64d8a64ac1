#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
cd ..
# Fuzz smoke (issue #23): each libFuzzer target for 30 s under ASan+UBSan, in
# build-fuzz/ (clang-14; only the 7 libraries the targets link: about 8 minutes
# cold on 2 cores, seconds with ccache), seed 1 so that a run is repeatable.
# DISCO_FUZZ_SMOKE=0 skips it.
if [ "${DISCO_FUZZ_SMOKE:-1}" != 0 ]; then
  for t in fuzz_onnx_import fuzz_npy fuzz_plan_cache; do DISCO_FUZZ_JOBS="$(nproc)" tools/fuzz.sh "$t" 30 -seed=1; done
fi
