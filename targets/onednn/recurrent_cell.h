// The step of an RNN, GRU (linear_before_reset) or LSTM node whose input
// projections a matmul computed before it (lowering/recurrent_projection.h):
// per step, the gates' sums h·R^T in registers and the cell's update on them
// (ONNX's default activations: Sigmoid and Tanh), for the oneDNN backend's
// onednn.recurrence step (onednn_recurrence.cc).
//
// Why its own kernel: the host backend's Halide recurrence
// (schedules/x86_recurrent_schedule.h) keeps one vector of hidden units per
// statement and stores its sums after every 16 terms of k, about 70-80
// GFLOP/s on the taggers' steps (batch 4 and 8, H 256) of this machine's
// 212; a register tile of a batch chunk by all of a tile's gates, summed
// over the whole k before the cell's update, runs the same steps at about
// 105, the gates' sigmoids and tanhs included (benchmarks/results/
// recurrent-cell-2026-12-07.md).
//
// Layouts. R per direction is packed once (RecurrenceKernel::pack in
// onednn_recurrence.cc) as [tiles][H (k)][G][W]: W hidden units (one
// vector) of each gate, so a tile's update has its i, o, f, c (or z, r, h)
// sums of the same units in registers. States are [B][tiles * W] (padding
// lanes zero, never read as k). The projections are [T, B, D*G*H] (layout
// 0) or [B, T, D*G*H].
//
// The ISA files (recurrent_cell_avx512.cc, recurrent_cell_avx2.cc) are built
// for their ISAs and hold no library code; call each only where its CPU
// check holds. recurrent_cell_scalar.cc runs everywhere else.
#pragma once
#include <cstdint>

namespace disco {

enum class RecurrentCellKind { Rnn, Gru, Lstm };

constexpr int recurrent_gates(RecurrentCellKind k) {
  return k == RecurrentCellKind::Rnn ? 1 : k == RecurrentCellKind::Gru ? 3 : 4;
}

struct RecurrentCell {
  RecurrentCellKind kind = RecurrentCellKind::Lstm;
  int64_t steps = 0, batch = 0, hidden = 0, directions = 1;
  bool batch_first = false;  // layout 1: projections [B, T, ...], Y [B, T, D, H]
  int lanes = 16;            // W, the packing's and the states' vector width
  const float *projections = nullptr;
  const float *packed_r = nullptr;  // directions * packed_r_floats(), see above
  const float *gru_rbh = nullptr;   // GRU: [D][tiles * W], Rb of gate h (added inside r * (...)); null: 0
  float *y = nullptr;               // [T, D, B, H] or [B, T, D, H]; null: not wanted

  int64_t tiles() const { return (hidden + lanes - 1) / lanes; }
  int64_t padded() const { return tiles() * lanes; }
  int64_t packed_r_floats() const { return tiles() * hidden * recurrent_gates(kind) * lanes; }
};

// One step t of direction d for the hidden tiles [tile_begin, tile_end):
// reads h_prev [B][padded], writes h_next's tiles, updates c's (LSTM) in
// place, and writes Y's units of those tiles at t.
void recurrent_step_avx512(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                           const float *h_prev, float *h_next, float *cell);
void recurrent_step_avx2(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                         const float *h_prev, float *h_next, float *cell);
void recurrent_step_scalar(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                           const float *h_prev, float *h_next, float *cell);

}  // namespace disco
