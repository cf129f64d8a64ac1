// Routing of ops to their data-dependent variants (data_dependent_ops.cc).
#pragma once

#include "frontend/graph.h"

namespace disco {

// A TopK (opset 10 on) whose K is computed from the data, as SSD's and
// RetinaNet's min(k, candidates kept by the score threshold), not a constant,
// a folded Shape arithmetic value or a graph input (which the session
// compiles in), becomes the host op disco::TopKDynamic: its k and so its
// output extent along the axis are known only at run time, and bind a fresh
// symbol. Called by shape inference on each node before its rule; true when
// `node` was rewritten.
bool route_data_dependent_topk(Graph &g, Node &node);

}  // namespace disco
