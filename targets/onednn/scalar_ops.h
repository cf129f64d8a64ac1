// panel_math.h's operations on one float, as the vector ones on each lane (a
// fused multiply-add as the hardware's, scalef as ldexp): the recurrent
// cell's portable form (recurrent_cell_scalar.cc) and the tests of
// panel_math.h on every CPU.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "lowering/math_coefficients.h"

namespace disco {

struct ScalarOps {
  using V = float;
  static constexpr int kLanes = 1;
  static constexpr int kRegisters = 16;
  static float load(const float *p, int64_t n) { return n >= 1 ? *p : 0.0f; }
  static void store(float *p, float v, int64_t n) {
    if (n >= 1) *p = v;
  }
  static float splat(float v) { return v; }
  static float add(float a, float b) { return a + b; }
  static float sub(float a, float b) { return a - b; }
  static float mul(float a, float b) { return a * b; }
  static float div(float a, float b) { return a / b; }
  static float fmadd(float a, float b, float c) { return std::fma(a, b, c); }
  static float min(float a, float b) { return a < b ? a : b; }  // b when either is NaN, as vminps
  static float max(float a, float b) { return a > b ? a : b; }
  static float abs(float a) { return std::fabs(a); }
  static float high_bits(float a) {
    uint32_t u;
    std::memcpy(&u, &a, 4);
    u &= math_coefficients::kHalfMantissaMask;
    std::memcpy(&a, &u, 4);
    return a;
  }
  static float round(float a) { return std::nearbyint(a); }
  static float scale(float a, float k) { return std::ldexp(a, static_cast<int>(k)); }
  static float scale_or_zero(float a, float k, float s, float least) { return s >= least ? scale(a, k) : 0.0f; }
  static float select_negative(float c, float a, float b) { return c < 0 ? a : b; }
  static float keep_nan(float x, float y) { return std::isnan(x) ? x : y; }
};

}  // namespace disco
