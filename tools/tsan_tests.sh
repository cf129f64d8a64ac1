#!/usr/bin/env bash
# The concurrency tests under ThreadSanitizer (issue #23 point 4), in
# build-tsan/: GCC, -DDISCO_SANITIZE=thread. Not part of tools/test.sh (a
# ThreadSanitizer build of disco's libraries costs about as much as the normal
# build); run it after changes to the session, executor, caches or AOT driver.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/tsan_tests.sh [--build-only]
Builds, in build-tsan/ (GCC, -DDISCO_SANITIZE=thread), the tests that run disco
from several threads at once, and runs them with ThreadSanitizer:
  SessionThreads.*            Session::run from 8 threads (executor pool)
  ExternCAbi.Concurrent*      oneDNN/extern steps called from several threads
  HalideBlockCache.*Threads*  the kernels' block cache shared by threads
  aot_concurrent_mlp, aot_concurrent_layernorm_softmax
                              an AOT library's NAME_run from 6 threads
Every report is fatal (halt_on_error=1), except those tools/tsan.supp lists
(frames inside the uninstrumented libdnnl.so; see docs/reliability.md). Two
passes: OpenMP teams as the machine gives them, with tools/tsan_openmp.supp
(libgomp is not instrumented either), then teams of one thread without it.
Environment: DISCO_TSAN_JOBS (-j, default 2), DISCO_TSAN_BUILD_DIR (build-tsan).
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
BUILD_ONLY=0
if [ "${1:-}" = "--build-only" ]; then BUILD_ONLY=1; shift; fi

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${DISCO_TSAN_BUILD_DIR:-$ROOT/build-tsan}"
JOBS="${DISCO_TSAN_JOBS:-2}"

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISCO_SANITIZE=thread \
    -DDISCO_BUILD_TESTS=ON -DDISCO_BUILD_BENCHMARKS=OFF >/dev/null
fi
start=$(date +%s)
# The AOT libraries are made at build time by this build's disco.
TSAN_OPTIONS=report_bugs=0 cmake --build "$BUILD" -j "$JOBS" --target session_threads_test extern_c_abi_test \
  halide_block_cache_test aot_harness_mlp aot_harness_layernorm_softmax
echo "tsan: built in $(( $(date +%s) - start )) s"
[ "$BUILD_ONLY" = 1 ] && exit 0

export DISCO_CACHE_DIR="$BUILD/compile-cache"
# oneDNN's global primitive cache hands a primitive one thread created to
# another; the lock that orders them is inside the uninstrumented libdnnl, and
# the reads are in dnnl.hpp's inline code (compiled into disco, so no libdnnl
# frame for tools/tsan.supp to match): a false report. Without the cache each
# executor's oneDNN steps make their own primitives.
export ONEDNN_PRIMITIVE_CACHE_CAPACITY=0
TESTS='^SessionThreads\.|^ExternCAbi\.Concurrent|^HalideBlockCache\..*Threads|^aot_concurrent_(mlp|layernorm_softmax)$'
start=$(date +%s)
rc=0
# Pass 1: OpenMP teams as the machine gives them; reports with a frame in the
# uninstrumented libgomp or libdnnl are suppressed (tools/tsan_openmp.supp says why).
rm -rf "$DISCO_CACHE_DIR"  # a cold cache: compiles at run time are part of what runs concurrently
cat "$ROOT/tools/tsan.supp" "$ROOT/tools/tsan_openmp.supp" > "$BUILD/tsan-pass1.supp"
(cd "$BUILD" && TSAN_OPTIONS="suppressions=$BUILD/tsan-pass1.supp halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j 1 -R "$TESTS") || rc=1
# Pass 2: teams of one thread (no libgomp worker threads), libgomp not suppressed.
rm -rf "$DISCO_CACHE_DIR"
(cd "$BUILD" && OMP_THREAD_LIMIT=1 TSAN_OPTIONS="suppressions=$ROOT/tools/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j 1 -R "$TESTS") || rc=1
echo "tsan: tests in $(( $(date +%s) - start )) s"
exit $rc
