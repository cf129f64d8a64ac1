// disco's math library: the transcendental functions of the op lowerings, as
// Halide arithmetic that vectorizes (polynomials, bit manipulation, selects;
// no calls). Halide's own exp, log, tanh, ... lower to one scalar libm call
// per lane on x86 (23 ns per element in a GELU). Every backend gets these:
// host and GPU kernels lower through them, and the oneDNN panel product's
// AVX-512 GELU evaluates exp's polynomial and an erfc of its own from
// math_coefficients.h.
//
// Types: float32 takes the library's path; float16 and bfloat16 compute in
// float32 and round back; float64 falls back to Halide's functions (erf and
// GELU compute in float32).
//
// Accuracy: the bounds below are the worst error in ulps of the exact result
// that tests/lowering/math_library_test.cc measures over the stated range,
// against double precision, with and without FMA. Outside a range the result
// is still finite where the function is, unless said otherwise.
//
// Special values follow C's float functions (C99 Annex F): NaN in gives NaN
// out (pow's exceptions aside), -0 is kept where C keeps it, overflow gives
// +-inf and underflow gives 0 (through denormals where said). A result that
// rounds to 0 is made without arithmetic below the normals (0 times a normal
// value): on x86 each such result costs a microcode assist per vector, and a
// mask's -1e9 before a Softmax made every hidden element one (6.5x the
// Softmax's time). Genuine denormal results still pay it.
//
// Call these qualified (math::exp): an unqualified exp(Expr) is ambiguous
// with Halide::exp.
#pragma once
#include <Halide.h>

namespace disco::math {

// ---- exp and log ------------------------------------------------------------------

// e^x: <= 1 ulp on [-87.3, 88.7] with FMA, <= 1.75 ulp without; denormal
// results (down to -103.9) within 1 ulp of their spacing. exp(-inf) = 0,
// exp(+inf) = +inf, x > 88.73 gives +inf, x < -103.98 gives 0.
Halide::Expr exp(const Halide::Expr &x);

// e^x for x <= 0 or NaN (x - max in a softmax): exp's bounds on [-87, 0],
// and its denormal results below (0 below -103.97). It had returned e^-87
// there, and a "score > 0" after a softmax (Faster R-CNN's box_score_thresh
// of 0) kept classes that PyTorch's and onnxruntime's 0 dropped. About two
// thirds of exp's work.
Halide::Expr exp_nonpositive(const Halide::Expr &x);

// e^x for |x| <= 87 or NaN (a bounded softmax input): exp's bounds, no clamps.
Halide::Expr exp_bounded(const Halide::Expr &x);

// e^x - 1: <= 1.5 ulp on [-17, 88.7]. expm1(+-0) = +-0, expm1(-inf) = -1,
// expm1(+inf) = +inf.
Halide::Expr expm1(const Halide::Expr &x);

// ln x: <= 1 ulp with FMA, <= 1.75 ulp without, for every positive x,
// denormals included. log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf,
// log(1) = +0.
Halide::Expr log(const Halide::Expr &x);

// ln(1 + x): <= 1 ulp with FMA, <= 1.25 ulp without, on (-1, 3.4e38].
// log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(+-0) = +-0, log1p(+inf) = +inf.
Halide::Expr log1p(const Halide::Expr &x);

// x^y: <= 1 ulp (0.501 measured) for every x, y whose result is a normal
// float, as 2^(y log2 |x|) in float64. powf's special cases (C99 F.9.4.4):
// pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN; pow(-1, +-inf) = 1; a
// negative finite x to a finite non-integer y is NaN; pow(+-0, y) and
// pow(+-inf, y) keep x's sign for odd integer y; y = +-inf goes by |x|
// against 1. Other NaNs give NaN.
Halide::Expr pow(const Halide::Expr &x, const Halide::Expr &y);

// x^n for a constant integer n, by repeated squaring (1 / x^-n for n < 0):
// <= 0.5 ulp for n in {-1, 1, 2}, 1.5 for n in {-2, 3}, 2 for n = 4, 2.5 for
// n = -3, 3.5 for n = -4, growing with |n| beyond (where no intermediate
// power overflows). pow_int(x, 0) = 1 for every x, as pow.
Halide::Expr pow_int(const Halide::Expr &x, int n);

// sqrt x: Halide's, correctly rounded (one vector instruction).
Halide::Expr sqrt(const Halide::Expr &x);

// 1 / sqrt x: <= 1.5 ulp (a division, not the 12-bit estimate). rsqrt(+-0) =
// +-inf, rsqrt(x < 0) = NaN, rsqrt(+inf) = 0.
Halide::Expr rsqrt(const Halide::Expr &x);

// ---- NaN tests, max and min -----------------------------------------------------------

// Whether x (a float of any width) is a NaN, of either sign: an integer
// test of its bits, which no float flag folds away. Halide's own is_nan
// missed a negative float64 NaN, and x86 makes negative NaNs (0 / 0).
Halide::Expr is_nan(const Halide::Expr &x);
// Whether x (a float of any width) is neither infinite nor a NaN, by the same
// kind of bit test (the no-infs flags would fold a compare with inf).
Halide::Expr is_finite(const Halide::Expr &x);

// max(a, b), min(a, b) and clamp(x, lo, hi) that return a NaN operand, as
// numpy's maximum, PyTorch's relu, clamp and amax, and IEEE 754-2019's
// maximum do. Halide's own compile under the no-NaNs flags, where the
// answer with a NaN operand depends on the instruction's operand order
// (x86's maxps returns its second): Relu(NaN) came out 0 and ReduceMax
// skipped NaNs. With two NaNs, a's is returned. Integers go to Halide's;
// float16 and bfloat16 compare in float32 (exactly). One compare and blend
// per float operand that is not a constant.
Halide::Expr max(const Halide::Expr &a, const Halide::Expr &b);
Halide::Expr min(const Halide::Expr &a, const Halide::Expr &b);
Halide::Expr clamp(const Halide::Expr &x, const Halide::Expr &lo, const Halide::Expr &hi);

// Keys for max and min folds. A fold by math::max is not one Halide's rfactor
// can prove associative (its NaN selects are no operator it knows), and row
// folds split into vector partials through rfactor. So float folds run on
// keys: a float32 (float64) as an int32 (int64) that orders as the float
// does, -0 below +0, and a NaN above +inf (max_key) or below -inf (min_key).
// Halide's max (min) of max_key (min_key) keys is then math::max (min) of the
// floats, and from_key gives the float back (a NaN as a NaN).
Halide::Expr max_key(const Halide::Expr &x);
Halide::Expr min_key(const Halide::Expr &x);
Halide::Expr from_key(const Halide::Expr &key);

// ---- activations --------------------------------------------------------------------

// tanh x: <= 2.5 ulp everywhere. tanh(+-0) = +-0, tanh(+-inf) = +-1.
Halide::Expr tanh(const Halide::Expr &x);

// 1 / (1 + e^-x): <= 2.5 ulp with FMA, <= 3 ulp without, wherever the result
// is normal (x >= -87.3); denormal results come out of exp's.
// sigmoid(-inf) = 0, sigmoid(+inf) = 1.
Halide::Expr sigmoid(const Halide::Expr &x);

// ln(1 + e^x): <= 2 ulp with FMA, <= 2.5 ulp without, wherever the result is
// normal (x >= -87.33); below, 0 (denormal results flushed). softplus(x) = x
// for large x; softplus(-inf) = 0, softplus(+inf) = +inf.
Halide::Expr softplus(const Halide::Expr &x);

// x tanh(softplus(x)): <= 4.5 ulp wherever the result is normal (x >= -87.3).
// mish(+-0) = +-0, mish(-inf) = -0, mish(+inf) = +inf.
Halide::Expr mish(const Halide::Expr &x);

// erf x: <= 1.25 ulp everywhere. erf(+-0) = +-0, erf(+-inf) = +-1.
Halide::Expr erf(const Halide::Expr &x);

// GELU in its erf form, x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, as max(x, 0)
// - |x| Q(|x|) with Q the upper tail, erfc(|x| / sqrt 2) / 2, on both sides
// of 0, so that it keeps its relative accuracy where it is small: <= 5 ulp
// with FMA, <= 6 ulp without, wherever the result is normal (x >= -13).
// gelu_erf(+-0) = +-0, gelu_erf(-inf) = -0, gelu_erf(+inf) = +inf.
Halide::Expr gelu_erf(const Halide::Expr &x);

// GELU in its tanh form, x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2,
// evaluated as x / (1 + e^(-2 sqrt(2/pi) (x + 0.044715 x^3))): <= 12 ulp for
// x >= -3; below, the rounding of the exponent's argument grows with it
// (<= 256 ulp, 1.5e-5 relative, on [-9, -3]); below -10 (results below
// 1.3e-37), -0. gelu_tanh(-inf) = -0, gelu_tanh(+inf) = +inf.
Halide::Expr gelu_tanh(const Halide::Expr &x);

// ---- trigonometry -------------------------------------------------------------------

// sin x and cos x: <= 1.6 ulp for |x| <= 1.3e7 (the reduction by pi/2 runs in
// float64, exact up to there); beyond, |x| is taken as 1.3e7. sin(+-0)
// = +-0; sin and cos of +-inf are NaN.
Halide::Expr sin(const Halide::Expr &x);
Halide::Expr cos(const Halide::Expr &x);

// atan x: <= 1.5 ulp everywhere. atan(+-0) = +-0, atan(+-inf) = +-pi/2.
Halide::Expr atan(const Halide::Expr &x);

// tan x: <= 2.5 ulp for |x| <= 1.3e7 (sin's reduction); beyond, finite.
// tan(+-0) = +-0, tan(+-inf) = NaN.
Halide::Expr tan(const Halide::Expr &x);

// asin x and acos x: <= ASIN and <= 1.5 ulp on [-1, 1]; NaN beyond.
// asin(+-0) = +-0, asin(+-1) = +-pi/2, acos(1) = +0, acos(-1) = pi.
Halide::Expr asin(const Halide::Expr &x);
Halide::Expr acos(const Halide::Expr &x);

// ---- hyperbolic functions ---------------------------------------------------------

// sinh x: <= 3 ulp everywhere; +-inf beyond +-89.41. sinh(+-0) = +-0,
// sinh(+-inf) = +-inf.
Halide::Expr sinh(const Halide::Expr &x);

// cosh x: <= 2.5 ulp everywhere; +inf beyond +-89.41. cosh(+-0) = 1,
// cosh(+-inf) = +inf.
Halide::Expr cosh(const Halide::Expr &x);

// asinh x: <= 2 ulp everywhere. asinh(+-0) = +-0, asinh(+-inf) = +-inf.
Halide::Expr asinh(const Halide::Expr &x);

// acosh x: <= 2.5 ulp for x >= 1; NaN below. acosh(1) = +0, acosh(+inf) = +inf.
Halide::Expr acosh(const Halide::Expr &x);

// atanh x: <= 2.5 ulp on (-1, 1); NaN beyond. atanh(+-0) = +-0,
// atanh(+-1) = +-inf.
Halide::Expr atanh(const Halide::Expr &x);

}  // namespace disco::math
