// Constant RNN/GRU/LSTM weights laid out at compile time the way the
// recurrent kernels read them (lowering/ops/recurrent_ops.cc): R [D, G*H, H]
// as [D, G, H (k), H (j)], each gate's block transposed, so that a vector of
// hidden units j is contiguous for one k and a step's block of consecutive k
// rows of one gate is contiguous (rows G*H floats apart would share L1 sets);
// W [D, G*H, I] in panels of w gate rows, [D, G*H / w, I, w], each the
// contiguous operand of one column of the projection's micro-tiles (rows of
// a plain [D, I, G*H] are 4 KiB apart at G*H = 1024: one L1 set). No run
// transposes them.
#pragma once

#include <vector>

#include "frontend/graph.h"

namespace disco {

// The node attribute that marks a recurrent node whose W and R are laid out
// so: W's panel width w. Internal to disco (never in a model).
constexpr const char *kRecurrentWeightsTransposedAttr = "disco.recurrent_weights_transposed";

// Whether the node's W and R are laid out so, and W's panel width (0: not).
bool has_transposed_recurrent_weights(const AttrReader &attrs);
int recurrent_panel_width(const AttrReader &attrs);

// [D, G*H, H] as [D, G, H, H], each gate's [H, H] block transposed.
TensorData transpose_gate_blocks(const TensorData &r);
// [D, rows, cols] as [D, rows / width, cols, width]; width divides rows.
TensorData pack_gate_panels(const TensorData &w, int64_t width);

// For the RNN, GRU and LSTM nodes among `nodes` whose W and R are both rank-3
// float32 constants: R becomes transpose_gate_blocks(R), W pack_gate_panels(W, w)
// with w = `panel` where it divides G*H, else G*H (one panel); once per
// weight; the node is marked with kRecurrentWeightsTransposedAttr = w.
// Returns the new values, for the caller's bookkeeping.
std::vector<int> transpose_recurrent_weights(Graph &g, const std::vector<int> &nodes, int panel);

}  // namespace disco
