// panel_math.h's vector operations on AVX-512 registers, and masked loads
// and stores of a vector's first lanes. Include only from files built with
// -mavx512f -mfma that run only where panel_gemm_cpu() holds (panel_gemm.cc,
// recurrent_cell_avx512.cc): these inline functions must not be merged into
// code that runs on other CPUs.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "lowering/math_coefficients.h"

namespace disco {

// panel_math.h's operations on 16 floats.
struct Avx512 {
  using V = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  // The first `n` lanes at p (all 16 from 16 on, none below 1); the rest 0, neither read nor
  // written (a panel's columns past the product's last).
  static __m512 load(const float *p, int64_t n) {
    return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n < 0 ? 0 : n)) - 1), p);
  }
  static void store(float *p, __m512 v, int64_t n) {
    if (n >= 16)
      _mm512_storeu_ps(p, v);
    else
      _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << (n < 0 ? 0 : n)) - 1), v);
  }
  static __m512 splat(float v) { return _mm512_set1_ps(v); }
  static __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
  static __m512 sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
  static __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
  static __m512 div(__m512 a, __m512 b) { return _mm512_div_ps(a, b); }
  static __m512 fmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
  static __m512 min(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
  static __m512 max(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
  static __m512 abs(__m512 a) { return _mm512_abs_ps(a); }
  static __m512 high_bits(__m512 a) {
    const __m512i mask = _mm512_set1_epi32(static_cast<int>(math_coefficients::kHalfMantissaMask));
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), mask));
  }
  static __m512 round(__m512 a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static __m512 scale(__m512 a, __m512 k) { return _mm512_scalef_ps(a, k); }
  // a 2^k where s >= least, else 0: zero-masked lanes are not computed, so they cost no underflow assist.
  static __m512 scale_or_zero(__m512 a, __m512 k, __m512 s, float least) {
    return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(s, _mm512_set1_ps(least), _CMP_GE_OQ), a, k);
  }
  static __m512 select_negative(__m512 c, __m512 a, __m512 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, _mm512_setzero_ps(), _CMP_LT_OQ), b, a);
  }
  static __m512 keep_nan(__m512 x, __m512 y) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, x);
  }
};

}  // namespace disco
