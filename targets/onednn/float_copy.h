// Copies of large float runs in the glue (a Concat's inputs into its result,
// a residual into a convolution's or matmul's destination). glibc's memcpy
// copies runs of this size (hundreds of KiB, in the L2) with `rep movsb`:
// squeezenet1_1's concats took 7.8% of its run on one thread, and an
// AVX-512 loop of four vectors a turn made the whole model 0.96-0.97 of its
// time there (benchmarks/results/concat-copy-2026-12-07.md).
#pragma once
#include <cstdint>
#include <cstring>

#include "targets/onednn/panel_gemm.h"

namespace disco {

// n floats from src to dst (not overlapping) with AVX-512 loads and stores;
// built for AVX-512 (float_copy_avx512.cc): call only where panel_gemm_cpu() holds.
void copy_floats_avx512(float *dst, const float *src, int64_t n);

inline void copy_floats(float *dst, const float *src, int64_t n) {
  if (n <= 0) return;
  if (panel_gemm_cpu())
    copy_floats_avx512(dst, src, n);
  else
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace disco
