// float_copy.h's AVX-512 copy. Built with -mavx512f and without C++ library
// code: run only where panel_gemm_cpu() holds.
#include "targets/onednn/avx512_ops.h"
#include "targets/onednn/float_copy.h"

namespace disco {

void copy_floats_avx512(float *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 a = _mm512_loadu_ps(src + i), b = _mm512_loadu_ps(src + i + 16), c = _mm512_loadu_ps(src + i + 32),
                 d = _mm512_loadu_ps(src + i + 48);
    _mm512_storeu_ps(dst + i, a);
    _mm512_storeu_ps(dst + i + 16, b);
    _mm512_storeu_ps(dst + i + 32, c);
    _mm512_storeu_ps(dst + i + 48, d);
  }
  for (; i < n; i += 16) Avx512::store(dst + i, Avx512::load(src + i, n - i), n - i);
}

}  // namespace disco
