#!/usr/bin/env bash
# Installs the Debian packages that disco's build and tests need. Idempotent,
# and silent when everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libhalide14-0-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-testdata
  libdnnl-dev
  libxir-dev libvart-dev libxrt-dev libunilog-dev libxir-utils  # vitis_ai backend (optional at configure time)
  pocl-opencl-icd ocl-icd-opencl-dev
  python3-dev python3-numpy python3-pytest python3-pybind11 pybind11-dev  # the Python module (issue #25)
  python3-torch python3-torchvision python3-matplotlib  # references, from_torch, benchmark charts
  dpkg-dev  # cpack -G DEB
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
