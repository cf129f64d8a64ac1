// max_pool_avx2.h's loop. Each output pixel's block of channels is one or two
// vectors, the max of its window's taps that lie in X (the window's rows and
// columns clipped to X once per row and per pixel).
#include <immintrin.h>

#include "targets/onednn/max_pool_avx2.h"

namespace disco {
namespace {

// kVectors AVX2 vectors of channels per pixel: the block as a compile-time
// constant, so that the maxima stay in registers.
template <int kVectors>
void max_pool_rows(const BlockedMaxPool &p, int64_t first, int64_t last) {
  constexpr int64_t kBlock = 8 * kVectors;
  for (int64_t row = first; row < last; ++row) {
    const int64_t plane = row / p.oh, o = row % p.oh;
    const float *x = p.x + plane * p.ih * p.iw * kBlock;
    float *y = p.y + (plane * p.oh + o) * p.ow * kBlock;
    const int64_t h0 = o * p.sh - p.pad_top;
    const int64_t r0 = h0 < 0 ? 0 : h0, r1 = h0 + p.kh > p.ih ? p.ih : h0 + p.kh;
    for (int64_t q = 0; q < p.ow; ++q) {
      const int64_t w0 = q * p.sw - p.pad_left;
      const int64_t c0 = w0 < 0 ? 0 : w0, c1 = w0 + p.kw > p.iw ? p.iw : w0 + p.kw;
      __m256 m[kVectors];
      for (int v = 0; v < kVectors; ++v) m[v] = _mm256_set1_ps(-__builtin_inff());
      for (int64_t r = r0; r < r1; ++r) {
        const float *xr = x + r * p.iw * kBlock;
        for (int64_t c = c0; c < c1; ++c)
          for (int v = 0; v < kVectors; ++v) m[v] = _mm256_max_ps(m[v], _mm256_loadu_ps(xr + c * kBlock + 8 * v));
      }
      for (int v = 0; v < kVectors; ++v) _mm256_storeu_ps(y + q * kBlock + 8 * v, m[v]);
    }
  }
}

// Planes [first, last): kVectors AVX2 vectors of channels per pixel, each
// summed in kChains interleaved chains (an add's latency, not its
// throughput, would bound one chain), then scaled by 1 / pixels.
template <int kVectors>
void global_avg_planes(const BlockedMaxPool &p, int64_t first, int64_t last) {
  constexpr int64_t kBlock = 8 * kVectors;
  constexpr int kChains = 4;
  const int64_t pixels = p.ih * p.iw;
  const __m256 scale = _mm256_set1_ps(pixels > 0 ? 1.0f / static_cast<float>(pixels) : 0.0f);
  for (int64_t plane = first; plane < last; ++plane) {
    const float *x = p.x + plane * pixels * kBlock;
    __m256 acc[kChains][kVectors];
    for (int c = 0; c < kChains; ++c)
      for (int v = 0; v < kVectors; ++v) acc[c][v] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + kChains <= pixels; i += kChains)
      for (int c = 0; c < kChains; ++c)
        for (int v = 0; v < kVectors; ++v)
          acc[c][v] = _mm256_add_ps(acc[c][v], _mm256_loadu_ps(x + (i + c) * kBlock + 8 * v));
    for (; i < pixels; ++i)
      for (int v = 0; v < kVectors; ++v) acc[0][v] = _mm256_add_ps(acc[0][v], _mm256_loadu_ps(x + i * kBlock + 8 * v));
    for (int v = 0; v < kVectors; ++v) {
      const __m256 sum = _mm256_add_ps(_mm256_add_ps(acc[0][v], acc[1][v]), _mm256_add_ps(acc[2][v], acc[3][v]));
      _mm256_storeu_ps(p.y + plane * kBlock + 8 * v, _mm256_mul_ps(sum, scale));
    }
  }
}

}  // namespace

void global_avg_pool_blocked_avx2(const BlockedMaxPool &p, int64_t first, int64_t last) {
  if (p.block == 16)
    global_avg_planes<2>(p, first, last);
  else
    global_avg_planes<1>(p, first, last);
}

void max_pool_blocked_avx2(const BlockedMaxPool &p, int64_t first, int64_t last) {
  if (p.block == 16) max_pool_rows<2>(p, first, last);
  else max_pool_rows<1>(p, first, last);
}

}  // namespace disco
