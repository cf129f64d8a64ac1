#!/usr/bin/env bash
# Installs Bazel 2.1.0 from npm (@bazel/bazel, whose package for linux_x64
# carries the real binary) into DIR and prints the binary's path:
#   bazel/install_bazel.sh DIR
# npm's post-install scripts are not run (--ignore-scripts), so the binary is
# made executable here. Idempotent: a second call installs nothing.
set -euo pipefail
dir="${1:?usage: install_bazel.sh DIR}"
version=2.1.0
bin="$dir/node_modules/@bazel/bazel-linux_x64/bazel-$version-linux-x86_64"
if [ ! -f "$bin" ]; then
  command -v npm >/dev/null || { echo "install_bazel: npm not found (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dir"
  npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "@bazel/bazel@$version" >&2
fi
chmod +x "$bin"
echo "$bin"
