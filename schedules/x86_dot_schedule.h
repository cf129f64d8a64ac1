// The x86 template of MatMul/Gemm kernels (a dot product over one reduction
// axis k, its right operand a DotOperand stage, lowering/ops/dot_ops.cc),
// the way fast GEMM libraries run it:
//  - tasks: the output split into tiles of kPanelVectors vectors of N by up to
//    kTaskRows rows of M (and one index of each batch dim), run in parallel;
//  - pack: each task copies the panel of the right operand it reads (K x
//    one tile of N, any view of it: transposed, strided, broadcast) into a
//    contiguous buffer, so the micro-kernel's loads are unit-stride;
//  - K blocks of kKBlock, for the L1: the task's sums stay in a small
//    buffer while a block of k runs over every micro-tile of rows;
//  - micro-kernel: kPanelVectors vectors by MR rows of sums in registers,
//    MR = 4 with AVX2 (12 of 16 registers), 8 with AVX-512 (24 of 32);
//  - the epilogue (bias, activation, residual) is applied as the task's
//    tile of the output is written.
// A constant right operand is packed once at compile time instead, in panels
// one micro-tile wide (dot_panel_width, lowering/weight_layout.h), and read in
// place: no run packs it.
// specialize() branches take shapes with at least one tile ("tiles": M >= MR;
// "rows": M < MR, wider tiles of one row), whose tiles of N overlap at N's
// edge instead of having tails; tasks of rows stop at M, and the last
// micro-tile of sums runs past it on A's last row (the dot lowering reads
// rows past M there). The generic branch guards its tails. All run the
// same loops. A branch the shape store decides is taken alone, or dropped.
#pragma once
#include "Halide.h"
#include "lowering/lower_graph.h"
#include "schedules/scheduler.h"

namespace disco {

constexpr int kPanelVectors = 3;  // vectors of N per micro-tile
constexpr int kTaskRows = 64;     // rows of M per task at most
constexpr int kKBlock = 256;      // k per block: a packed block of 24 KiB with AVX2
constexpr int kWideVectors = 6;   // vectors of N per task of the "rows" branch (M < MR)

// The width of the panels a constant right operand with N columns is packed
// in for `target`: one micro-tile of kPanelVectors vectors when N is a
// multiple of it, else of two vectors (a micro-kernel of 2 vectors by MR
// rows), else 0: not packed (every tile must start on a panel, and tiles of
// the last columns start at N - width).
int dot_panel_width(int64_t n, const Halide::Target &target);

// The rows of M one task computes: a multiple of `rows` (the micro-tile's),
// at most kTaskRows, in as few tasks as that allows, spread evenly over M.
Halide::Expr dot_task_rows(const Halide::Expr &m, int rows);

struct DotExtents {
  KnownExtent n, m;  // the output's two innermost extents
};

// Schedules `k` with the dot template and returns true, or returns false,
// scheduling nothing, when the kernel is not a float32 dot of that form (one
// output, one product stage over one k, one DotOperand stage of the output's
// rank, nothing else).
bool schedule_x86_dot(LoweredKernel &k, const DotExtents &e, const Halide::Target &target, ScheduleReport *rep);

}  // namespace disco
