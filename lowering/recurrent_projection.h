// The input projection of RNN/GRU/LSTM nodes split out as a MatMul, for a
// backend whose matmul runs it faster than the recurrent kernel's own
// projection (oneDNN: 166 against about 130 GFLOP/s on one AVX-512 core at
// the taggers' 128 and 800 rows, benchmarks/results/recurrent-matmul-2026-12-06.md).
#pragma once

#include "frontend/graph.h"

namespace disco {

// The node attribute that marks a recurrent node whose input 0 is not X but
// its projections, X·W^T + Wb + Rb over every step and direction: [T, B,
// D*G*H] (layout 0) or [B, T, D*G*H] (layout 1), column d*G*H + g*H + j for
// gate g of direction d. W is omitted; B stays for the recurrence's own use
// (GRU's linear_before_reset adds Rb of gate h inside r * (...)), its other
// parts already in the projections. Internal to disco (never in a model).
constexpr const char *kRecurrentProjectedInputAttr = "disco.recurrent_projected_input";

bool has_projected_recurrent_input(const AttrReader &attrs);

// For each RNN/GRU/LSTM node whose X is a rank-3 float32 tensor with a
// constant input size and whose W (and B, where given) are float32
// constants: a MatMul of X by W^T [I, D*G*H] (a new constant, directions
// side by side) and, with B, an Add of Wb + Rb (Rb of GRU's gate h left out
// under linear_before_reset) compute the projections, which the node reads
// instead of X (kRecurrentProjectedInputAttr). The new values' shapes are
// set; nodes are sorted again. Returns the number of nodes split.
int split_recurrent_projections(Graph &g);

}  // namespace disco
