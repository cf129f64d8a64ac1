// max_pool_avx2.h's loop. Each output pixel's 8 channels are one vector, the
// max of its window's taps that lie in X (the window's rows and columns
// clipped to X once per row and per pixel).
#include <immintrin.h>

#include "targets/onednn/max_pool_avx2.h"

namespace disco {

void max_pool_blocked8_avx2(const BlockedMaxPool &p, int64_t first, int64_t last) {
  for (int64_t row = first; row < last; ++row) {
    const int64_t plane = row / p.oh, o = row % p.oh;
    const float *x = p.x + plane * p.ih * p.iw * 8;
    float *y = p.y + (plane * p.oh + o) * p.ow * 8;
    const int64_t h0 = o * p.sh - p.pad_top;
    const int64_t r0 = h0 < 0 ? 0 : h0, r1 = h0 + p.kh > p.ih ? p.ih : h0 + p.kh;
    for (int64_t q = 0; q < p.ow; ++q) {
      const int64_t w0 = q * p.sw - p.pad_left;
      const int64_t c0 = w0 < 0 ? 0 : w0, c1 = w0 + p.kw > p.iw ? p.iw : w0 + p.kw;
      __m256 m = _mm256_set1_ps(-__builtin_inff());
      for (int64_t r = r0; r < r1; ++r) {
        const float *xr = x + r * p.iw * 8;
        for (int64_t c = c0; c < c1; ++c) m = _mm256_max_ps(m, _mm256_loadu_ps(xr + c * 8));
      }
      _mm256_storeu_ps(y + q * 8, m);
    }
  }
}

}  // namespace disco
