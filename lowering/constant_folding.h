// Constant folding at compile time. A node whose inputs are all constants and
// whose outputs are small is evaluated once, with Halide's JIT, through the
// same lowering that kernels use; its outputs become constants. Ops that only
// re-view their input (Identity, Reshape, Squeeze, ...) or move its elements
// (Transpose, Slice, Concat, Expand, ScatterND: lowering/constant_copies.h)
// are folded by a copy, and elementwise ops whose result C++ computes exactly
// as the kernel does (lowering/constant_arithmetic.h) by evaluation, without
// the JIT's ~0.1 s a node. This is what
// lets a Range limit computed in float from a graph input (bound by a
// Session), or an ONNX function's expansion, feed shapes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

// Constants made at compile time are bounded, so that a small model cannot
// make the compiler fill gigabytes (Range(0, 2^40, 1) did): a node with a
// larger output is left to its kernel. Nodes folded through the JIT and
// integer Ranges make at most kMaxFoldedElements: consumers of an integer
// constant walk it element by element at compile time (a 2^21-element Range
// feeding an Add took 15 s to infer). Float Ranges, which have no kernel, fold
// up to kMaxFoldedBytes and are refused above it.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 16;
constexpr int64_t kMaxFoldedBytes = int64_t(16) << 20;

// Folds g.nodes[index] if it qualifies; returns whether it did. Never throws:
// a node that cannot be folded is simply left for its kernel.
bool fold_constant_node(Graph &g, size_t index, const ShapeStore &store);

}  // namespace disco
