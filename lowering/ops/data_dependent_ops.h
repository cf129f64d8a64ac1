// Routing of ops to their data-dependent variants (data_dependent_ops.cc).
#pragma once

#include "frontend/graph.h"

namespace disco {

// A TopK (opset 10 on) whose K is not a constant or a graph input (which the
// session compiles in) becomes the host op disco::TopKDynamic: K computed
// from the data, as SSD's and RetinaNet's min(k, candidates kept by the score
// threshold), binds a fresh symbol for the output's extent along the axis;
// K folded from Shape arithmetic (torchvision's min(k, anchors), a ReduceMin
// of a Shape) keeps its dims. TopK's kernels take K as a constant, so such a
// K had made the session compile one input shape at a time. Called by shape
// inference on each node before its rule; true when `node` was rewritten.
bool route_data_dependent_topk(Graph &g, Node &node);

}  // namespace disco
