// Constant RNN/GRU/LSTM weights laid out at compile time the way the
// recurrent kernels read them (lowering/ops/recurrent_ops.cc): R [D, G*H, H]
// as [D, G, H / P, H (k), P (j)], each gate's block transposed and cut into
// panels of P hidden units j (the recurrence's tile), so that a vector of j
// is contiguous for one k and a tile's rows over every k are one contiguous
// stream (rows G*H floats apart would share L1 sets);
// W [D, G*H, I] in panels of w gate rows, [D, G*H / w, I, w], each the
// contiguous operand of one column of the projection's micro-tiles (rows of
// a plain [D, I, G*H] are 4 KiB apart at G*H = 1024: one L1 set). No run
// transposes them.
#pragma once

#include <vector>

#include "frontend/graph.h"

namespace disco {

// The recurrence's states and sums (lowering/ops/recurrent_ops.cc) are
// stored in tiles of kRecurrentStateLanes hidden units by
// kRecurrentStateRows batch rows, contiguous: the register tile of the x86
// template's statement (schedules/x86_recurrent_schedule.h), 2 AVX2 vectors
// of hidden units by 4 rows, so that each R vector it loads serves 4 rows.
constexpr int kRecurrentStateLanes = 16;
constexpr int kRecurrentStateRows = 4;

// The node attribute that marks a recurrent node whose W and R are laid out
// so: W's panel width w. Internal to disco (never in a model).
constexpr const char *kRecurrentWeightsTransposedAttr = "disco.recurrent_weights_transposed";

// Whether the node's W and R are laid out so, and W's panel width (0: not).
bool has_transposed_recurrent_weights(const AttrReader &attrs);
int recurrent_panel_width(const AttrReader &attrs);

// [D, G*H, H] as [D, G, H / P, H, P], each gate's [H, H] block transposed
// (k rows of j) and cut into panels of P = kRecurrentStateLanes units of j
// (P = H where that does not divide H): a tile of the recurrence reads its
// R rows over every k as one contiguous stream.
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
