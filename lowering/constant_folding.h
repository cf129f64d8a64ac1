// Constant folding at compile time. A node whose inputs are all constants and
// whose outputs are small is evaluated once, with Halide's JIT, through the
// same lowering that kernels use; its outputs become constants. Ops that only
// re-view their input (Identity, Reshape, Squeeze, ...) are folded by a copy,
// without the JIT's ~0.1 s a node. This is what
// lets a Range limit computed in float from a graph input (bound by a
// Session), or an ONNX function's expansion, feed shapes.
#pragma once
#include <cstddef>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

// Folds g.nodes[index] if it qualifies; returns whether it did. Never throws:
// a node that cannot be folded is simply left for its kernel.
bool fold_constant_node(Graph &g, size_t index, const ShapeStore &store);

}  // namespace disco
