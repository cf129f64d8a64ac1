// The x86 template of RNN/GRU/LSTM kernels (lowering/ops/recurrent_ops.cc):
//  - the input projection of every step (RecurrentInput, unless a library's
//    matmul computed it before, lowering/recurrent_projection.h) as a GEMM: micro-tiles
//    of kProjectionRows rows of X by 2 or 4 vectors of gate rows in registers over
//    the input size, tasks of a few micro-tiles of rows per direction, in
//    parallel;
//  - the recurrence (Recurrence): directions in parallel; per step and phase
//    (phases unrolled, so each is its own loop nest), the chunks of k (the
//    lowering adds up to 16 terms of k per statement) outside the batch and
//    the hidden units j: a chunk's rows of R, one gate's and contiguous,
//    serve every batch row from L1; from a tile of the states' layout on
//    (16 units of j by 8 AVX-512 or 4 AVX2 batch rows, contiguous,
//    lowering/recurrent_weight_layout.h; half tiles of 4 rows on AVX-512),
//    a statement per row of the tile with AVX-512 (16 units, one vector;
//    the rows unrolled, each R vector loaded once for them) or one per
//    tile with AVX2 (2 x 4 vectors), its sums in registers over the chunk;
//    below a tile, one row per statement;
//  - weights transposed at run time (not constant) and the outputs at root,
//    vectorized; the initial values and the outputs serial (little work:
//    a parallel loop per step of the initial values made two threads 20x
//    slower than one).
// Tails are guarded where the hidden size or the gate rows do not divide into
// the tiles.
#pragma once
#include "Halide.h"
#include "lowering/lower_graph.h"
#include "schedules/scheduler.h"

namespace disco {

constexpr int kProjectionRows = 6;    // rows of X per projection micro-tile
constexpr int kProjectionTasks = 8;   // micro-tiles of rows per projection task

// Vectors of gate rows per projection micro-tile: 4 where the target has 32
// vector registers (AVX-512: 6 x 4 accumulators, 24 of 32), else 2 (6 x 2 of
// AVX2's 16). Each W vector then serves 6 rows and each broadcast of X 4
// vectors: 0.94-0.97x the taggers' layer-2 kernel time at 6 x 2
// (recurrent-projection-2026-12-06.md). W's constant panels
// (recurrent_weight_layout.h) are this many vectors wide.
int recurrent_projection_vectors(const Halide::Target &target);

// Schedules `k` with the recurrent template and returns true, or returns
// false, scheduling nothing, when `k` is not a recurrent kernel (one
// RecurrentInput and one Recurrence stage, or a Recurrence stage alone where
// the node reads X's projections (lowering/recurrent_projection.h); other
// stages pure).
bool schedule_x86_recurrent(LoweredKernel &k, const Halide::Target &target, ScheduleReport *rep);

}  // namespace disco
