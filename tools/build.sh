#!/usr/bin/env bash
# Configures and builds disco (Release) into build/, installing packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths relative to this checkout in ccache's hashes: clones on one machine share its objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build -j "$(nproc)"
