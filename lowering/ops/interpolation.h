// What the interpolating ops (Resize, GridSample) share.
#pragma once
#include <vector>

#include "Halide.h"

namespace disco {

// Keys' cubic convolution weights of the four taps at -1, 0, 1, 2 around a
// point at offset t in [0, 1] from tap 0, with coefficient a (-0.75 in
// onnxruntime and PyTorch, -0.5 in TensorFlow). Computed in t's type.
inline std::vector<Halide::Expr> cubic_coeffs(const Halide::Expr &t, double a_value) {
  using Halide::Expr;
  Halide::Type ty = t.type();
  auto k = [&](double v) { return Halide::cast(ty, Expr(v)); };
  Expr a = k(a_value), one = k(1), s = one - t;
  return {((a * (t + one) - k(5) * a) * (t + one) + k(8) * a) * (t + one) - k(4) * a,
          ((a + k(2)) * t - (a + k(3))) * t * t + one, ((a + k(2)) * s - (a + k(3))) * s * s + one,
          ((a * (s + one) - k(5) * a) * (s + one) + k(8) * a) * (s + one) - k(4) * a};
}

}  // namespace disco
