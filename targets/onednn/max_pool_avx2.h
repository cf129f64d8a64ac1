// Max pooling of 2-D maps held blocked by 8 or 16 channels (oneDNN's nChw8c
// or nChw16c, the layout the backend keeps between convolutions:
// onednn_layout.h), for AVX2 CPUs and up. oneDNN 2.6's jit:avx2 max pooling
// ran SqueezeNet's and ResNet's 3x3 stride-2 pools at 0.17-0.73 ms on one
// thread, where this plain loop, one 8-channel vector per tap, takes
// 0.29-0.33 of that time (same results:
// max is exact; benchmarks/results/max-pool-2026-12-02.md).
//
// Its .cc is built with AVX2 enabled and holds no C++ library code: call it
// only where max_pool_avx2_cpu() says so.
#pragma once
#include <cstdint>

namespace disco {

struct BlockedMaxPool {
  const float *x = nullptr;  // [planes][ih][iw][block]
  float *y = nullptr;        // [planes][oh][ow][block]
  int64_t block = 8;         // channels per block: 8 or 16 (two AVX2 vectors)
  int64_t ih = 0, iw = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pad_top = 0, pad_left = 0;  // taps outside X are skipped (every window reads some of X)
};

// Global average pooling of the same layout: each plane's mean over its ih x
// iw pixels, into [planes][1][1][block] (p.oh = p.ow = 1; kernels, strides
// and pads unused). oneDNN 2.6's jit:avx512_core global average pooling took
// 16-36 us for EfficientNet-B0's squeeze-and-excitation pools (7x7 to 56x56
// maps of 96 to 1280 channels, about 2 ns per element), where a sum in
// registers reads them at cache speed (results/global-avg-pool-2026-12-06.md).
void global_avg_pool_blocked_avx2(const BlockedMaxPool &p, int64_t first, int64_t last);

inline bool max_pool_avx2_cpu() { return __builtin_cpu_supports("avx2"); }

// Output rows [first, last) of planes * oh (plane-major), on the calling thread.
void max_pool_blocked_avx2(const BlockedMaxPool &p, int64_t first, int64_t last);

}  // namespace disco
