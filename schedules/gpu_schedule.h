// GPU schedule templates (CUDA and OpenCL share them), one per fusion-group
// kind, as schedules/x86_schedule.h is for the host. Every schedule is valid
// for every shape: each split guards its tail, no extent is assumed.
//
// - loop:   outputs tiled onto 32x8 threads per block (the innermost dim on
//           threadIdx.x, every outer dim fused onto threadIdx.y), blocks over
//           the tiles. Roots get specialize() branches: "hint" (hinted symbols
//           at their likely values) and "dense" (no broadcast dim is 1 and the
//           innermost extent is a multiple of 32: the x split needs no guard).
// - stitch: one block per row (Softmax, LayerNormalization rows); the row's
//           elements on 128 threads; every row reduction is a block-level
//           reduction (rfactor into 128 partials, one per thread, in shared
//           memory, then folded by one thread), computed once per block.
// - input:  row reductions at root as block reductions, one block per kept
//           row; other reductions one thread per output element.
// - dot:    2-D MatMul/Gemm with constant-shape weights: 32x8 output tiles
//           per block, k in steps of 32, each step's weight tile loaded by the
//           block's threads into shared memory ("gpu-dot-shared"). Otherwise
//           (batch dims, convolutions, symbolic operands) the output is tiled
//           as in loop kernels and each thread computes its dot product in
//           registers (k loop innermost), the epilogue inlined.
// - anything a GPU loop cannot express (scatter-like updates) stays on the
//           host CPU; Halide copies buffers between host and device.
#pragma once
#include "Halide.h"
#include "schedules/scheduler.h"

namespace disco {

constexpr int kGpuTileX = 32;         // threads along the innermost dim (a warp)
constexpr int kGpuTileY = 8;          // threads along the fused outer dims
constexpr int kGpuThreads1D = 256;    // threads per block for rank-1 loops
constexpr int kGpuReduceThreads = 128;  // partial sums per block reduction

ScheduleReport schedule_gpu(LoweredKernel &k, GroupKind kind, const ShapeStore &store);

}  // namespace disco
