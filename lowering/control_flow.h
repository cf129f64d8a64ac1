// Control flow (If, Loop, Scan) by expansion. disco compiles straight-line
// kernels, so a control-flow node is replaced, during shape inference, by the
// nodes it amounts to once its decisions are known at compile time:
//  - If: the taken branch, when the condition is known (a constant, a folded
//    shape fact, or a graph input whose value the Session compiles in);
//  - Loop: the body unrolled, when the trip count and condition are known and
//    the body passes its condition through unchanged;
//  - Scan: the body unrolled over a sequence length that is a constant.
// Otherwise the node fails naming what had to be known.
#pragma once
#include <cstddef>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

bool is_control_flow(const Node &n);
// Replaces g.nodes[index] by its expansion (possibly empty). Throws
// ValueRequired (lowering/known_values.h) when a graph input's value decides.
void expand_control_flow(Graph &g, size_t index, const ShapeStore &store);

}  // namespace disco
