#!/usr/bin/env bash
# Builds examples/bazel_app from scratch with Bazel 2.1.0 (npm's @bazel/bazel,
# installed into WORKDIR/npm) against the disco compiler DISCO, and runs its
# program as `bazel test` (the ctest bazel_app_example):
#   examples/bazel_app/run_example.sh build/tools/disco WORKDIR
# Bazel's output root, and so all it builds and caches, lives under WORKDIR;
# the example's source folder gets nothing (no bazel-* links).
# Exits 77 (a skip for ctest) only when Bazel cannot be installed.
set -euo pipefail
disco="$(realpath "${1:?usage: run_example.sh DISCO WORKDIR}")"
work="$(mkdir -p "${2:?usage: run_example.sh DISCO WORKDIR}" && cd "$2" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if ! bazel="$("$repo/bazel/install_bazel.sh" "$work/npm")"; then
  echo "bazel_app: SKIPPED: could not install Bazel 2.1.0 from npm (see above)"
  exit 77
fi
"$repo/bazel/offline/write_bazelrc.sh" > "$work/offline.bazelrc"

bz() {
  (cd "$here" && DISCO_BIN="$disco" "$bazel" --batch --output_user_root="$work/root" \
    --bazelrc="$work/offline.bazelrc" "$@")
}
# From a clean tree: drop what an earlier run built and fetched.
bz clean --expunge
start=$SECONDS
bz build --symlink_prefix=/ --jobs=2 --local_cpu_resources=2 //:app
echo "bazel_app: built in $((SECONDS - start)) s, model $(cat "$(bz info output_base 2>/dev/null)/external/example_data/model_name.txt")"
bz test --symlink_prefix=/ --jobs=2 --local_cpu_resources=2 //:app
