// Constant RNN/GRU/LSTM weights stored transposed at compile time, the way
// the recurrent kernels read them (lowering/ops/recurrent_ops.cc): W [D, G*H, I]
// as [D, I, G*H] and R [D, G*H, H] as [D, H, G*H], so that a vector of gate
// rows is contiguous for one input or hidden unit. No run transposes them.
#pragma once

#include <vector>

#include "frontend/graph.h"

namespace disco {

// The node attribute that marks a recurrent node whose W and R are stored
// transposed. Internal to disco (never in a model).
constexpr const char *kRecurrentWeightsTransposedAttr = "disco.recurrent_weights_transposed";

// Whether the node's W and R are stored transposed.
bool has_transposed_recurrent_weights(const AttrReader &attrs);

// [D, rows, cols] as [D, cols, rows].
TensorData transpose_inner(const TensorData &w);

// For the RNN, GRU and LSTM nodes among `nodes` whose W and R are both rank-3
// float32 constants: each becomes transpose_inner of itself (once per weight),
// and the node is marked with kRecurrentWeightsTransposedAttr. Returns the new
// values, for the caller's bookkeeping.
std::vector<int> transpose_recurrent_weights(Graph &g, const std::vector<int> &nodes);

}  // namespace disco
