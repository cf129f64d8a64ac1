// The panel product's GELU, x Phi(x) in its erf form, step for step
// math::gelu_erf of lowering/math_library.cc with its constants
// (lowering/math_coefficients.h): Phi from erfc(|x| / sqrt 2) = t e^(-x^2/2 +
// R(t - 0.65)), t = 1 / (1 + |x| / (2 sqrt 2)), x^2 taken exactly as hi + lo.
// So host kernels and the panel product compute one GELU, within a few ulp
// of each other (tests/targets/onednn/panel_math_test.cc).
//
// Written once over a vector type V and its operations Ops, so that
// panel_gemm.cc runs it on AVX-512 registers and the test on plain floats.
// Ops provides, as static functions on V:
//   splat(float), add, sub, mul, div, fmadd(a, b, c) = a b + c, min, max, abs,
//   high_bits(x) (x with its 12 low mantissa bits cleared), round(x) (to the
//   nearest integer, as a float), scale(x, k) (x 2^k, k integral),
//   select_negative(c, a, b) (a where c < 0, else b), keep_nan(x, y) (x where
//   x is NaN, else y).
// The same holds the products' whole epilogue (epilogue), so the AVX-512 and
// AVX2 products apply one list of steps alike.
// Templates and constants only: panel_gemm.cc and panel_gemm_avx2.cc, built
// for their ISAs, include it and must hold no library code.
#pragma once

#include "lowering/math_coefficients.h"
#include "targets/onednn/panel_gemm.h"

namespace disco::panel_math {

template <class Ops, class V, unsigned long N>
inline V horner(V x, const float (&c)[N]) {
  V p = Ops::splat(c[N - 1]);
  for (unsigned long i = N - 1; i-- > 0;) p = Ops::fmadd(p, x, Ops::splat(c[i]));
  return p;
}

// e^(hi + lo) for hi in [-104, 0] and |lo| < 2, hi exact in the reduction.
// Below ln 2^-150 the result is 0 by Ops::scale_or_zero's mask, not by an
// underflowing scale: an arithmetic result below the normals, 0 included,
// costs a microcode assist per vector (Zen 5: about 100x a plain vector
// operation), and a Sigmoid beyond -104 or a GELU beyond 14.4 reached that
// on every lane (7-13x the time per element, benchmarks/results/
// elementwise-underflow-2026-12-06.md).
template <class Ops, class V>
inline V exp_of_sum(V hi, V lo) {
  namespace mc = math_coefficients;
  const V s = Ops::add(hi, lo);
  const V k = Ops::round(Ops::mul(Ops::max(s, Ops::splat(-104.0f)), Ops::splat(mc::kLog2e)));
  V r = Ops::fmadd(k, Ops::splat(-mc::kLn2Hi), hi);  // exact
  r = Ops::fmadd(k, Ops::splat(-mc::kLn2Lo), Ops::add(r, lo));
  const V em1 = Ops::fmadd(Ops::mul(r, r), horner<Ops>(r, mc::kExpRemainder), r);  // e^r - 1
  return Ops::scale_or_zero(Ops::add(em1, Ops::splat(1.0f)), k, s, mc::kLnHalfMinDenormal);
}

template <class Ops, class V>
inline V gelu_erf(V x) {
  namespace mc = math_coefficients;
  const V xc = Ops::min(Ops::max(x, Ops::splat(-16.0f)), Ops::splat(16.0f));
  // x^2 / 2 = hi + lo exactly.
  const V h = Ops::high_bits(xc), l = Ops::sub(xc, h), half = Ops::splat(0.5f);
  const V hi = Ops::mul(half, Ops::mul(h, h)), lo = Ops::mul(half, Ops::mul(l, Ops::add(Ops::add(h, h), l)));
  // erfc(a), a = |x| / sqrt 2.
  const V a = Ops::mul(Ops::abs(xc), Ops::splat(mc::kSqrtHalf));
  const V t =
      Ops::div(Ops::splat(1.0f), Ops::fmadd(Ops::min(a, Ops::splat(mc::kErfcMaxArgument)), half, Ops::splat(1.0f)));
  const V rt = horner<Ops>(Ops::sub(t, Ops::splat(mc::kErfcCenter)), mc::kErfc);
  const V hi_c = Ops::sub(Ops::splat(0.0f), Ops::min(hi, Ops::splat(104.0f)));
  const V half_erfc = Ops::mul(half, Ops::mul(t, exp_of_sum<Ops>(hi_c, Ops::sub(rt, lo))));
  const V phi = Ops::select_negative(xc, half_erfc, Ops::sub(Ops::splat(1.0f), half_erfc));
  return Ops::keep_nan(x, Ops::mul(Ops::max(x, Ops::splat(-16.0f)), phi));
}

// 1 / (1 + e^-x) as math::sigmoid computes it (e / (1 + e) below 0 and 1 /
// (1 + e) above, e = e^-|x|), e from exp_of_sum: within an ulp or two of
// the host kernels' sigmoid, so that a Linear's SiLU gives one model one set
// of numbers whichever kernel runs it.
template <class Ops, class V>
inline V sigmoid(V x) {
  const V one = Ops::splat(1.0f);
  const V e = exp_of_sum<Ops>(Ops::sub(Ops::splat(0.0f), Ops::min(Ops::abs(x), Ops::splat(104.0f))), Ops::splat(0.0f));
  return Ops::keep_nan(x, Ops::div(Ops::select_negative(x, e, one), Ops::add(one, e)));
}

// tanh |x| = E / (E + 2), E = e^(2|x|) - 1 with |x| clamped to 10 (where
// tanh rounds to 1), as math::tanh computes it (expm1 from exp's remainder
// polynomial: E = 2^k (e^r - 1) + (2^k - 1)), the sign put back by a
// select: within an ulp or two of the host kernels' tanh (tanh(-0) gives +0
// here). The recurrent cells' gates (recurrent_cell.h) take it.
template <class Ops, class V>
inline V tanh(V x) {
  namespace mc = math_coefficients;
  const V a = Ops::mul(Ops::min(Ops::abs(x), Ops::splat(10.0f)), Ops::splat(2.0f));
  const V k = Ops::round(Ops::mul(a, Ops::splat(mc::kLog2e)));
  V r = Ops::fmadd(k, Ops::splat(-mc::kLn2Hi), a);  // exact
  r = Ops::fmadd(k, Ops::splat(-mc::kLn2Lo), r);
  const V em1 = Ops::fmadd(Ops::mul(r, r), horner<Ops>(r, mc::kExpRemainder), r);  // e^r - 1
  const V two_k = Ops::scale(Ops::splat(1.0f), k);
  const V e = Ops::fmadd(two_k, em1, Ops::sub(two_k, Ops::splat(1.0f)));
  const V t = Ops::div(e, Ops::add(e, Ops::splat(2.0f)));
  return Ops::keep_nan(x, Ops::select_negative(x, Ops::sub(Ops::splat(0.0f), t), t));
}

// The panel products' epilogue (panel_gemm.h's PanelOp steps, in order) on
// `count` vectors, step by step: each step runs over all of them before the
// next starts, so that a core overlaps their long dependency chains (GELU's
// is some forty operations) instead of waiting out one vector's after
// another. `operand(op, j)` loads a binary step's operand for vector j
// (masked or broadcast as the product needs).
template <class Ops, class V, class Load>
inline void epilogue_each(V *v, int count, const PanelOp *ops, int num_ops, Load operand) {
  for (int i = 0; i < num_ops; ++i) {
    const PanelOp &op = ops[i];
    switch (op.kind) {
      case PanelOp::Add:
        for (int j = 0; j < count; ++j) v[j] = Ops::add(v[j], operand(op, j));
        break;
      case PanelOp::Mul:
        for (int j = 0; j < count; ++j) v[j] = Ops::mul(v[j], operand(op, j));
        break;
      case PanelOp::Relu:  // a: the slope below zero
        for (int j = 0; j < count; ++j) v[j] = Ops::select_negative(v[j], Ops::mul(v[j], Ops::splat(op.a)), v[j]);
        break;
      case PanelOp::GeluErf:
        for (int j = 0; j < count; ++j) v[j] = gelu_erf<Ops>(v[j]);
        break;
      case PanelOp::Linear:
        for (int j = 0; j < count; ++j) v[j] = Ops::fmadd(v[j], Ops::splat(op.a), Ops::splat(op.b));
        break;
      case PanelOp::Sigmoid:
        for (int j = 0; j < count; ++j) v[j] = sigmoid<Ops>(v[j]);
        break;
      case PanelOp::Swish:
        for (int j = 0; j < count; ++j) v[j] = Ops::mul(v[j], sigmoid<Ops>(Ops::mul(v[j], Ops::splat(op.a))));
        break;
      case PanelOp::HardSwish:
        for (int j = 0; j < count; ++j) {
          const V gate = Ops::fmadd(v[j], Ops::splat(1.0f / 6.0f), Ops::splat(0.5f));
          v[j] = Ops::mul(v[j], Ops::min(Ops::max(gate, Ops::splat(0.0f)), Ops::splat(1.0f)));
        }
        break;
    }
  }
}

// The same on one vector; `operand(op)` loads a binary step's operand.
template <class Ops, class V, class Load>
inline V epilogue(V v, const PanelOp *ops, int num_ops, Load operand) {
  epilogue_each<Ops>(&v, 1, ops, num_ops, [&](const PanelOp &op, int) { return operand(op); });
  return v;
}

// The epilogue's unary steps (no Add or Mul) over n floats in place, W
// lanes per vector: four vectors at a time, so that their chains overlap,
// then one at a time. load(p, count) and store(p, v, count) read and write
// the first `count` lanes (all W when count >= W).
template <class Ops, class V, int W, class Load, class Store>
inline void eltwise_pass(float *data, int64_t n, const PanelOp *ops, int num_ops, Load load, Store store) {
  auto none = [](const PanelOp &, int) { return Ops::splat(0.0f); };  // no operand is read
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    V v[4];
    for (int j = 0; j < 4; ++j) v[j] = load(data + i + W * j, W);
    epilogue_each<Ops>(v, 4, ops, num_ops, none);
    for (int j = 0; j < 4; ++j) store(data + i + W * j, v[j], W);
  }
  for (; i < n; i += W) {
    V v = load(data + i, n - i);
    epilogue_each<Ops>(&v, 1, ops, num_ops, none);
    store(data + i, v, n - i);
  }
}

}  // namespace disco::panel_math
