// Constant folding by copying: Transpose, Slice (opset 10 on), Concat,
// Expand and ScatterND of constants move elements without computing any, so
// their outputs are made here by strided copies instead of through lowering
// and Halide's JIT (about 60 ms a node: swin_t's attention masks, built from
// constants by 135 Expands, 105 Slices, 45 Concats and 20 Transposes among
// 517 folded nodes, took 29 s of its compile, and its 45 ScatterNDs 2.7 s).
// The output shapes are shape inference's.
#pragma once
#include <optional>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

// The output of node `n` (one of the ops above, every data input constant,
// its output shape constant), or nothing for any other node or a form these
// copies do not handle (which then folds through the JIT or stays a kernel).
std::optional<TensorData> fold_by_copy(const Graph &g, const Node &n, const ShapeStore &store);

}  // namespace disco
