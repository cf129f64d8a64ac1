// The end of a oneDNN step's epilogue that disco computes itself: its last
// unary post-ops from the first sigmoid, SiLU or GELU on, run over the
// step's result in place once the primitive has written it.
//
// Why: oneDNN 2.6's eltwise post-ops are slow at these on this machine's
// AVX-512 (Zen 4): efficientnet_b0's expand conv (1x1, 16 -> 96 at 112x112)
// with its SiLU fused took 1.07 ms per run, where ONNX Runtime took 0.40 ms
// for the conv and 0.37 ms for its separate SiLU; as a pass of our own, 0.92
// ms. Whole models: efficientnet_b0 0.82-0.97 of the time before, lraspp
// 0.89 (benchmarks/results/eltwise-tail-2026-12-04.md).
// It also gives these steps the math library's sigmoid and GELU
// (panel_math.h), as host kernels and the panel products compute them,
// instead of oneDNN's approximations.
#pragma once
#include <cstdint>
#include <vector>

#include "targets/onednn/onednn_step.h"
#include "targets/onednn/panel_gemm.h"

namespace disco {

struct EltwiseTail {
  std::vector<PanelOp> ops;
  bool empty() const { return ops.empty(); }
};

// Moves the tail out of `e` (whose remaining ops oneDNN runs): the longest
// run of unary post-ops that panel_math computes at the end of e.ops, from
// its first Sigmoid, Swish or GeluErf on. Empty, and `e` unchanged, where
// there is none, this CPU has neither AVX-512 nor AVX2 with FMA, or the
// environment sets DISCO_ELTWISE_TAIL=0.
EltwiseTail take_eltwise_tail(Epilogue &e);

// Applies the tail to n floats at `data` in place, with `team` threads.
// Every element may be computed: a blocked layout's padding channels too.
void run_eltwise_tail(const EltwiseTail &tail, float *data, int64_t n, int team);

}  // namespace disco
