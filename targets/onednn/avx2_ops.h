// panel_math.h's vector operations on AVX2 registers, and masked loads and
// stores of a vector's first lanes. Include only from files built with
// -mavx2 -mfma that run only where panel_gemm_avx2_cpu() holds
// (panel_gemm_avx2.cc, recurrent_cell_avx2.cc): these inline functions must
// not be merged into code that runs on other CPUs.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "lowering/math_coefficients.h"

namespace disco {

// panel_math.h's operations on 8 floats. AVX2 has no scalef: scale() builds
// 2^k in two halves, each a normal float, so that a result in the subnormal
// range is rounded once, as scalef rounds it (k >= -150 in exp_of_sum).
struct Avx2 {
  using V = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  // The first `n` lanes at p (all 8 from 8 on, none below 1); the rest 0, neither read nor
  // written (a panel's columns past the product's last).
  static __m256i lanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n < 0   ? 0
                                                                 : n > 8 ? 8
                                                                         : n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static __m256 load(const float *p, int64_t n) {
    return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lanes(n));
  }
  static void store(float *p, __m256 v, int64_t n) {
    if (n >= 8)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, lanes(n), v);
  }
  static __m256 splat(float v) { return _mm256_set1_ps(v); }
  static __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
  static __m256 sub(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
  static __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
  static __m256 div(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
  static __m256 fmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  static __m256 min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
  static __m256 max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
  static __m256 abs(__m256 a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
  static __m256 high_bits(__m256 a) {
    const __m256i mask = _mm256_set1_epi32(static_cast<int>(math_coefficients::kHalfMantissaMask));
    return _mm256_and_ps(a, _mm256_castsi256_ps(mask));
  }
  static __m256 round(__m256 a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static __m256 pow2(__m256i k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
  }
  static __m256 scale(__m256 a, __m256 k) {
    const __m256i ki = _mm256_cvtps_epi32(k), k1 = _mm256_srai_epi32(ki, 1), k2 = _mm256_sub_epi32(ki, k1);
    return _mm256_mul_ps(_mm256_mul_ps(a, pow2(k1)), pow2(k2));
  }
  // a 2^k where s >= least, else 0, with k taken as 0 there: no lane's product underflows (an assist each).
  static __m256 scale_or_zero(__m256 a, __m256 k, __m256 s, float least) {
    const __m256 keep = _mm256_cmp_ps(s, _mm256_set1_ps(least), _CMP_GE_OQ);
    return _mm256_and_ps(scale(a, _mm256_and_ps(k, keep)), keep);
  }
  static __m256 select_negative(__m256 c, __m256 a, __m256 b) {
    return _mm256_blendv_ps(b, a, _mm256_cmp_ps(c, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static __m256 keep_nan(__m256 x, __m256 y) { return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); }
};

}  // namespace disco
