// Constant folding by evaluation in C++: elementwise ops on constants whose
// result C++ computes exactly as the kernel would (integer arithmetic and
// comparisons, float +, -, *, /, Where, Cast, integer Mod) are folded element
// by element instead of through lowering and Halide's JIT (about 60 ms a
// node: swin_t's shifted-window masks fold 54 Mods, 45 Adds, 20 Casts, 8
// Equals, 8 Wheres and 4 Nots of constants). Ops of the unary, binary and
// compare families carry their element fold at their registration
// (op_math.h); Where, Cast and Mod, which have no family, are here. Pow of a
// float base folds too, to C's pow rounded once: within the kernel's own
// rounding of it (an ulp or a few), not bit for bit (swin_t's 12
// head_dim ** -0.5).
#pragma once
#include <optional>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

// The output of node `n` (every data input constant, its output shape
// constant), or nothing for an op or dtype this does not evaluate, or an
// element it leaves to the kernel (an integer division by 0); such nodes then
// fold through the JIT.
std::optional<TensorData> fold_by_arithmetic(const Graph &g, const Node &n, const ShapeStore &store);

}  // namespace disco
