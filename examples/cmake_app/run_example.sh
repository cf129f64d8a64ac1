#!/usr/bin/env bash
# Builds examples/cmake_app from scratch in WORKDIR against the disco compiler
# DISCO and runs its program (the ctest cmake_app_example):
#   examples/cmake_app/run_example.sh build/tools/disco WORKDIR
set -euo pipefail
disco="$(realpath "${1:?usage: run_example.sh DISCO WORKDIR}")"
work="${2:?usage: run_example.sh DISCO WORKDIR}"
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$work"
export DISCO_CACHE_DIR="$work/compile-cache"  # from scratch: no kernels from earlier compiles
start=$SECONDS
cmake -S "$here" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDISCO_EXECUTABLE="$disco"
cmake --build "$work" -j 2
echo "cmake_app: configured and built in $((SECONDS - start)) s"
ctest --test-dir "$work" --output-on-failure -V
