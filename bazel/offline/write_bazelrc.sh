#!/usr/bin/env bash
# Prints a bazelrc that points Bazel 2.1 at the offline stand-ins in this folder
# for rules_cc, rules_java and remote_coverage_tools, which it would otherwise
# download. Bazel 2.1 takes only absolute paths in --override_repository (no
# %workspace%), so they are written for this checkout:
#   bazel/offline/write_bazelrc.sh > my_workspace/offline.bazelrc
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for repo in rules_cc rules_java remote_coverage_tools; do
  echo "build --override_repository=$repo=$here/$repo"
  echo "fetch --override_repository=$repo=$here/$repo"
  echo "query --override_repository=$repo=$here/$repo"
done
