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
// recurrent_state_rows() batch rows, contiguous: the register tile of the x86
// template's statement (schedules/x86_recurrent_schedule.h), so that each R
// vector it loads serves every row of the tile.
constexpr int kRecurrentStateLanes = 16;

// The tile's rows for a target with `f32_lanes` float lanes: 8 with AVX-512
// (16 x 8 is 8 zmm accumulators, and at batch 8 a step streams R once, not
// twice: 0.87-0.95x the taggers' time at 8x100, recurrent-2026-12-04-c.md),
// else 4 (2 x 4 AVX2 vectors; 8 rows would need all 16 ymm registers).
int recurrent_state_rows(int f32_lanes);
// The fewest batch rows that get a register tile, 4 on every target: a
// block of 4 with AVX2, half a block of 8 (4 zmm) with AVX-512, where a
// batch of 4 to 7 runs half tiles.
constexpr int kRecurrentTileMinRows = 4;

// Whether a statement of the recurrence's register tile is one batch row,
// the tile's rows unrolled: where a row of the tile (kRecurrentStateLanes
// units) is one vector (AVX-512). With AVX2 a statement is the whole tile,
// its rows vectorized too (lowering/ops/recurrent_ops.cc measures both).
inline bool recurrent_row_statements(int f32_lanes) { return f32_lanes >= kRecurrentStateLanes; }

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
