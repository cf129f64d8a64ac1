#!/usr/bin/env bash
# The main job on a bundled model: compile layernorm_softmax once, with its
# symbolic dims [batch, seq, 768], then run it at three shapes and check each
# output against PyTorch's.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
M=examples/models/layernorm_softmax.onnx
R=tests/references/layernorm_softmax
echo
echo "== disco inspect $M"
build/tools/disco inspect "$M" | sed -n '1,6p'
echo
echo "== disco run $M: one compile, three shapes, outputs checked against PyTorch"
build/tools/disco run "$M" --verbose \
  --input x=$R.1.input.npy --expect y=$R.1.output.npy \
  --input x=$R.2.input.npy --expect y=$R.2.output.npy \
  --input x=$R.3.input.npy --expect y=$R.3.output.npy \
  --output-dir build/demo-out
