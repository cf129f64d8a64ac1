// How the float32 functions survive compilation. Halide compiles float
// arithmetic with LLVM's fast-math flags (reassociation, no NaNs, no
// infinities, no signed zeros), under which (x - k C1) - k C2 may become
// x - k (C1 + C2); and Halide's own simplifier rewrites float arithmetic as it
// would integers' ((m - 1) c becomes m c - c, z + z q becomes z (q + 1), a
// constant term moves out of a sum). So:
// - the exact steps (the first step of a range reduction, m - 1, splits) go
//   through `opaque`, a strict_float, compiled without those flags and left
//   alone by the simplifier; a value whose form must not be spread over its
//   uses (a remainder that feeds a polynomial) goes through `hidden`;
// - special values are put in by selects on bit patterns (integer
//   operations), never by float compares with NaN or infinite constants;
// - rounding to an integer is a multiply-add with 1.5 * 2^23 read back
//   through the bits, and scaling by 2^k adds to the exponent bits before one
//   multiply, neither of which a flag can fold away.
#include "lowering/math_library.h"

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "lowering/math_coefficients.h"

namespace disco::math {

namespace {

using Halide::Expr;
namespace mc = math_coefficients;

bool is_f32(const Expr &x) { return x.type().is_float() && x.type().bits() == 32; }
bool is_f64(const Expr &x) { return x.type().is_float() && x.type().bits() == 64; }

// fn in float32 for float16 and bfloat16, rounded back.
template <class Fn>
Expr in_f32(const Expr &x, Fn fn) {
  return Halide::cast(x.type(), fn(Halide::cast(Halide::Float(32, x.type().lanes()), x)));
}

// Each function of the library by the argument's type: its float32 form,
// Halide's double-precision one for float64, and the float32 form through
// casts for float16 and bfloat16.
template <class F32, class F64>
Expr by_type(const Expr &x, F32 f32, F64 f64) {
  if (is_f32(x)) return f32(x);
  return is_f64(x) ? f64(x) : in_f32(x, f32);
}

// ---- bits ------------------------------------------------------------------------

Expr bits(const Expr &x) { return Halide::reinterpret(Halide::UInt(32, x.type().lanes()), x); }
Expr signed_bits(const Expr &x) { return Halide::reinterpret(Halide::Int(32, x.type().lanes()), x); }
Expr from_bits(const Expr &u) { return Halide::reinterpret(Halide::Float(32, u.type().lanes()), u); }
Expr u32(uint32_t v) { return Expr(v); }

constexpr uint32_t kSignBit = 0x80000000u, kAbsMask = 0x7fffffffu, kInfBits = 0x7f800000u, kNegInfBits = 0xff800000u,
                   kNanBits = 0x7fc00000u;

Expr sign_of(const Expr &x) { return bits(x) & u32(kSignBit); }
Expr abs_bits(const Expr &x) { return bits(x) & u32(kAbsMask); }
Expr is_nan_bits(const Expr &x) { return abs_bits(x) > u32(kInfBits); }
Expr is_zero(const Expr &x) { return abs_bits(x) == u32(0); }
// y with x's sign bit or'ed in (y >= 0): an odd function from its positive half.
Expr with_sign_of(const Expr &x, const Expr &y) { return from_bits(bits(y) | sign_of(x)); }
// A select on bit patterns: `value` where `cond`, else y.
Expr replace(const Expr &cond, const Expr &value_bits, const Expr &y) {
  return from_bits(Halide::select(cond, value_bits, bits(y)));
}
Expr replace(const Expr &cond, uint32_t value_bits, const Expr &y) { return replace(cond, u32(value_bits), y); }
// y, except x itself where x is NaN.
Expr keep_nan(const Expr &x, const Expr &y) { return replace(is_nan_bits(x), bits(x), y); }

// 2^k for an int32 k in [-126, 127].
Expr pow2(const Expr &k) { return from_bits(Halide::cast(Halide::UInt(32, k.type().lanes()), (k + 127) << 23)); }

// x, hidden from Halide's simplifier (a strict_float of x): so that m - 1
// stays one exact subtraction rather than being spread over its uses, and z +
// z q stays a multiply-add rather than z (q + 1).
Expr opaque(const Expr &x) { return Halide::strict_float(x); }

// x, hidden from Halide's simplifier like `opaque`, but without making its
// computation strict: -1 times x with its sign bit flipped, which LLVM folds
// back to x. For a large x (a polynomial) that must not be expanded into
// its uses.
Expr hidden(const Expr &x) { return from_bits(bits(x) ^ u32(kSignBit)) * -1.0f; }

// A polynomial in x, coefficients lowest degree first, by Horner's rule.
template <class T, size_t N>
Expr horner(const Expr &x, const T (&c)[N]) {
  Expr p = Halide::cast(x.type(), Expr(c[N - 1]));
  for (size_t i = N - 1; i-- > 0;) p = p * x + Halide::cast(x.type(), Expr(c[i]));
  return p;
}

// ---- exp ---------------------------------------------------------------------------

// k = round(x / ln 2) for |x / ln 2| < 2^22: x / ln 2 + 1.5 * 2^23 rounds to
// an integer, whose low mantissa bits hold k; as bits less the constant's, k.
// (x hidden: a constant term of x folded into 1.5 * 2^23 would be rounded.)
struct ExpArgument {
  Expr k;   // int32
  Expr kf;  // k as a float
};
ExpArgument exp_argument(const Expr &x) {
  Expr k = Halide::reinterpret(Halide::Int(32), bits(hidden(x) * mc::kLog2e + 12582912.0f) - u32(0x4B400000u));
  return {k, Halide::cast<float>(k)};
}

// x - k ln 2, exact in its first step (Cody and Waite).
Expr exp_remainder(const Expr &x, const Expr &kf) { return hidden(opaque(x - kf * mc::kLn2Hi) - kf * mc::kLn2Lo); }

// e^r - 1 = r + r^2 p(r) and e^r, |r| <= ln 2 / 2.
Expr expm1_remainder(const Expr &r) { return opaque(r) + (r * r) * horner(r, mc::kExpRemainder); }
Expr exp_remainder_value(const Expr &r) { return expm1_remainder(r) + 1.0f; }

// y 2^k for y in [0.25, 2] and k in [-150, 128]: 2^(k/2) into y's exponent
// bits, then a multiply by the rest, so that an overflow gives inf and an
// underflow a correctly rounded denormal or 0. Where `zero` holds, the result
// is 0 times a normal value instead: an arithmetic result below the normals,
// 0 included, costs a microcode assist per vector (Zen 5: Exp of inputs below
// -104, 7.9x a copy's time).
Expr scale_by_pow2(const Expr &y, const Expr &k, const Expr &zero = Expr()) {
  Expr k1 = k >> 1;
  Expr rest = pow2(k - k1);
  if (zero.defined()) rest = Halide::select(zero, 0.0f, rest);
  return from_bits(bits(y) + Halide::cast<uint32_t>(k1 << 23)) * rest;
}

Expr exp_f32(const Expr &x) {
  Expr xc = Halide::clamp(x, -104.0f, 89.0f);
  ExpArgument a = exp_argument(xc);
  return keep_nan(x, scale_by_pow2(exp_remainder_value(exp_remainder(xc, a.kf)), a.k, x < mc::kLnHalfMinDenormal));
}

// e^x / 2 for x in [-103, 90] (NaN not kept): exp's reduction with 2^(k-1),
// finite up to where cosh overflows.
Expr half_exp(const Expr &x) {
  Expr xc = Halide::clamp(x, -103.0f, 90.0f);
  ExpArgument a = exp_argument(xc);
  return scale_by_pow2(exp_remainder_value(exp_remainder(xc, a.kf)), a.k - 1);
}

// e^x - 1 for x in [-18, 89]: 2^k (e^r - 1) + (2^k - 1), with 2^k - 1 exact
// for k <= 24. 2^k is 2^k1 2^k2 with k2 = 1 only at k = 128. With half,
// (e^x - 1) / 2 for x in [-18, 89.5] (2^(k-1) in place of 2^k), finite up to
// where sinh overflows.
Expr expm1_core(const Expr &x, bool half = false) {
  ExpArgument a = exp_argument(x);
  Expr em1 = expm1_remainder(exp_remainder(x, a.kf));
  Expr k = half ? a.k - 1 : a.k;
  Expr k2 = Halide::clamp(k - 127, 0, 1);
  Expr t1 = pow2(k - k2);
  return (t1 * em1 + opaque(t1 - (half ? 0.5f : 1.0f) * pow2(-k2))) * pow2(k2);
}

// k = round(x / ln 2) and 2^k for |x| <= 87, from one multiply-add: the
// rounding constant 1.5 * 2^23 + 127 leaves k + 127 (the exponent bias) in
// the low mantissa bits, so the bits shifted up by 23 are 2^k. Two vector
// operations fewer per element than converting k to an integer and back
// (measured 0.87-0.98 of the time of layernorm_softmax (16,512) on one thread).
struct BiasedExpArgument {
  Expr kf;      // k as a float
  Expr two_k;   // 2^k
  Expr k;       // k as an int32
  Expr biased;  // k + 127 in the low bits (uint32): two_k's exponent field
};
BiasedExpArgument biased_exp_argument(const Expr &x) {
  const uint32_t biased_magic = 0x4B400000u + 127;
  Expr t = bits(hidden(x) * mc::kLog2e + 12583039.0f);  // 1.5 * 2^23 + 127
  Expr k = Halide::reinterpret(Halide::Int(32), t - u32(biased_magic));
  return {Halide::cast<float>(k), from_bits(t << u32(23)), k, t};
}

// e^(hi + lo) for hi + lo in [-87.3, 0] (a normal result) and |lo| < 1: the
// reduction takes hi exactly and adds lo to the remainder, so hi's full
// precision counts.
Expr exp_of_sum_normal(const Expr &hi, const Expr &lo) {
  BiasedExpArgument a = biased_exp_argument(hi + lo);
  Expr r = hidden(opaque(hi - a.kf * mc::kLn2Hi) + (lo - a.kf * mc::kLn2Lo));
  return exp_remainder_value(r) * a.two_k;
}

// ---- log ---------------------------------------------------------------------------

// v = 2^e m with m in [0.75, 1.5), for positive normal v.
struct Decomposed {
  Expr e;  // int32
  Expr m;
};
Decomposed decompose(const Expr &v) {
  Expr t = signed_bits(v) - 0x3f400000;  // the bits of 0.75
  return {t >> 23, from_bits(Halide::cast(Halide::UInt(32), (t & 0x007fffff) + 0x3f400000))};
}

// e ln 2 + log1p(f) for f in [-0.25, 0.5], ln 2 in Cephes' two parts.
Expr log_of_parts(const Expr &e, const Expr &f) {
  Expr ef = Halide::cast<float>(e), f2 = f * f;
  Expr y = f * f2 * horner(f, mc::kLogTail) + ef * mc::kLn2Lo - 0.5f * f2;
  return (f + y) + ef * mc::kLn2Hi;
}

// The special values by signed compares of x's bits (one instruction each;
// AVX2 has no unsigned compare): below the least normal float are denormals
// and, taken along, negative x, which become NaN after.
Expr log_f32(const Expr &x) {
  Expr i = signed_bits(x);
  Expr denormal = i < 0x00800000;
  Decomposed d = decompose(Halide::select(denormal, x * 8388608.0f, x));  // 2^23
  Expr y = log_of_parts(d.e - Halide::select(denormal, 23, 0), opaque(d.m - 1.0f));
  y = replace(i >= int32_t(kInfBits), bits(x), y);  // +inf, NaN
  y = replace(i < 0, kNanBits, y);                  // x < 0, -0 and -NaN included
  return replace(is_zero(x), kNegInfBits, y);       // +-0
}

// log1p on [-1, 2^24): with 1 + x = 2^e m, f = m - 1 = (x - (2^e - 1)) 2^-e
// is exact (x and 2^e - 1 are within a factor 2 of each other), which the
// rounded 1 + x is not. From 2^24 on, log1p(x) rounds to log(x).
Expr log1p_f32(const Expr &x) {
  Expr big = x >= 16777216.0f;
  Decomposed d = decompose(Halide::select(big, x, 1.0f + x));
  Expr s = pow2(-d.e);
  Expr f = opaque(Halide::select(big, d.m - 1.0f, x * s - (1.0f - s)));
  return log_of_parts(d.e, f);
}

Expr log1p_with_specials(const Expr &x) {
  Expr u = bits(x);
  Expr y = log1p_f32(x);
  y = replace(u >= u32(kInfBits) && u < u32(kSignBit), u, y);  // +inf, NaN
  y = replace(u > u32(0xbf800000u), kNanBits, y);              // x < -1
  y = replace(u == u32(0xbf800000u), kNegInfBits, y);          // x = -1
  return replace(is_zero(x), u, y);
}

// ---- erf ---------------------------------------------------------------------------

// x^2 = hi + lo exactly, from x's 12 high significant bits h and the rest l:
// hi = h^2, lo = l (2 h + l), each exact.
struct Square {
  Expr hi, lo;
};
Square exact_square(const Expr &x) {
  Expr h = from_bits(bits(x) & u32(mc::kHalfMantissaMask));
  Expr l = opaque(x - h);
  return {opaque(h * h), opaque(l * (h + h + l))};
}

// erf(z) for |z| < 1: z + z Q(z^2).
Expr erf_small(const Expr &z) { return opaque(z) + z * horner(z * z, mc::kErfSmall); }

Expr erf_f32(const Expr &x) {
  // Beyond |x| = 1, erf = 1 - erfc needs erfc to an absolute 2^-25 only: one
  // polynomial in a on [1, 4] does (14 multiply-adds, against 21 vector
  // operations for exp(-a^2 + R(a)) and R). erf(4) rounds to 1.
  Expr a = Halide::abs(x), ac = Halide::clamp(a, 1.0f, 4.0f);
  Expr tail = with_sign_of(x, 1.0f - horner(opaque(ac - mc::kErfcTailCentre), mc::kErfcTail));
  return keep_nan(x, Halide::select(a < 1.0f, erf_small(x), tail));
}

// x Phi(x) = max(x, 0) - a Q(a), with a = |x| and Q(a) = erfc(a / sqrt 2) / 2
// = e^(-a^2/2) F(t), the upper tail: F, Q's scaled form, is a polynomial in
// t = 1 / (1 + c a), and no cancellation costs a Q(a) its relative accuracy
// (x - x Q(x) above 0 loses at most one bit, Q <= 1/2). Three independent
// parts, so that their latencies overlap: e^(-a^2/2) from a^2 exactly as hi +
// lo; t, corrected for the rounding of 1 + c a (t - t^2 d_lo, which matters
// near 0, where F is steep in t); and F(t). a is clamped to 13.2, where
// a^2/2 < 87.3 keeps e^(-a^2/2) normal; beyond, a Q(a) is taken as 0 (the
// result is x above 0 and -0 below). x's sign bit is or'ed in, so that -0
// stays -0 and underflow below 0 gives -0.
Expr gelu_erf_f32(const Expr &x) {
  // Beyond kGeluMaxArgument the tail is 0 (replaced below); those lanes take
  // a = 1 meanwhile, since at a = 13.2 a e f is below the normals, and each
  // such result costs a microcode assist per vector (GELU of inputs in
  // [-1000, -20]: 8.8x a copy's time).
  Expr beyond = abs_bits(x) > bits(Expr(mc::kGeluMaxArgument));
  Expr a = Halide::select(beyond, 1.0f, Halide::abs(x));
  Square a2 = exact_square(a);
  Expr e = exp_of_sum_normal(-0.5f * a2.hi, -0.5f * a2.lo);
  Expr ca = mc::kGeluTailScale * a;
  Expr d = opaque(1.0f + ca);
  Expr d_lo = opaque(opaque(1.0f - d) + ca);  // 1 + ca = d + d_lo exactly
  Expr t = 1.0f / d;
  Expr f = horner(opaque(t - mc::kGeluTailCenter) - (t * t) * d_lo, mc::kGeluTail);
  // a e first: e f may be denormal where a e f is not. (hidden, not opaque:
  // opaque would make the whole of e's computation strict, without FMAs.)
  Expr aq = hidden(a * e) * f;
  aq = replace(beyond, 0u, aq);
  return keep_nan(x, from_bits(bits(Halide::max(x, 0.0f) - aq) | sign_of(x)));
}

// x / (1 + e^v), v = -2 sqrt(2/pi) (x + 0.044715 x^3), at x clamped to
// [-10, 10] for v: |v| <= 87.31 there, so e^v is normal and finite without
// exp's clamps (beyond 10, x / (1 + e^v) is x; below -10 the result is
// taken as -0).
Expr gelu_tanh_f32(const Expr &x) {
  Expr xc = Halide::clamp(x, -10.0f, 10.0f);
  Expr v = xc * (-1.59576917f + -0.0713548139f * (xc * xc));
  BiasedExpArgument a = biased_exp_argument(v);
  Expr e = exp_remainder_value(exp_remainder(v, a.kf)) * a.two_k;
  return keep_nan(x, replace(x < -10.0f, kSignBit, x / (1.0f + e)));
}

// ---- tanh, sigmoid, softplus ---------------------------------------------------------

// tanh |x| = E / (E + 2), E = e^(2|x|) - 1, with |x| clamped to 10, where
// tanh rounds to 1; the sign put back from x's bits.
Expr tanh_f32(const Expr &x) {
  Expr e = expm1_core(2.0f * Halide::min(Halide::abs(x), 10.0f));
  return keep_nan(x, with_sign_of(x, e / (e + 2.0f)));
}

// e / (1 + e) below 0 and 1 / (1 + e) above, e = e^-|x| <= 1: no overflow,
// and tiny results come out of exp's denormals.
Expr sigmoid_f32(const Expr &x) {
  Expr e = exp_f32(-Halide::abs(x));
  return keep_nan(x, Halide::select(x < 0.0f, e, 1.0f) / (1.0f + e));
}

// max(x, 0) + log1p(e), e = e^-|x| in (0, 1]: log1p on [0, 1] as one
// polynomial, e + e^2 Q(e) (no reduction of its argument). Below 2^-24,
// log1p(e) rounds to e, so the e^2 Q(e) of such lanes is dropped, and taken
// at 2^-24 meanwhile: e^2 would fall below the normals, and each result there
// costs a microcode assist per vector (softplus of inputs in [-1000, -20]:
// 45x a copy's time). For the same reason e is taken at -20 for x > 20, where
// it no longer counts, and at 0 for the lanes below ln 2^-126, whose result is
// 0 (denormal results flushed).
Expr softplus_f32(const Expr &x) {
  Expr flushed = x < mc::kLnMinNormal;
  Expr xe = Halide::select(flushed, 0.0f, Halide::max(-Halide::abs(x), Halide::select(x > 0.0f, -20.0f, x)));
  BiasedExpArgument a = biased_exp_argument(xe);
  Expr e = exp_remainder_value(exp_remainder(xe, a.kf)) * a.two_k;
  const float rounds_to_e = 5.96046448e-8f;  // 2^-24: below it, log1p(e) rounds to e
  Expr ep = Halide::max(e, rounds_to_e);
  // The select on Q, not on the product, so that e + e^2 Q stays one multiply-add.
  Expr log1p_e = opaque(e) + (ep * ep) * Halide::select(e < rounds_to_e, 0.0f, horner(ep, mc::kLog1pUnit));
  Expr y = Halide::max(x, 0.0f) + log1p_e;
  return keep_nan(x, replace(flushed, 0u, y));
}

// x tanh(ln(1 + e^x)) = x n / (n + 2), n = (1 + e^x)^2 - 1 = e^x (e^x + 2):
// one exp, no cancellation. e^x at x clamped to 10, where n / (n + 2) rounds
// to 1, and x to -200, where the product rounds to -0 (so that -inf gives -0,
// not -inf * 0); the product opaque, so that LLVM's reassociation cannot form
// x n, which overflows.
Expr mish_f32(const Expr &x) {
  Expr e = exp_f32(Halide::min(x, 10.0f));
  Expr n = e * (e + 2.0f);
  return keep_nan(x, opaque(Halide::max(x, -200.0f) * (n / (n + 2.0f))));  // not (x n) / (n + 2)
}

// ---- sin, cos, atan ---------------------------------------------------------------------

// |x| = k pi/2 + r in double, exact for k < 2^23: |x| clamped to 1.3e7
// first (beyond, where the reduction would be inexact, results stay
// bounded), so |r| <= pi/4 needs no clamp. k = round(|x| 2/pi) by one
// rounding instruction, and converted to int32 for the quadrant (five vector
// operations fewer than through the bits of k + 1.5 * 2^52). Only the first
// step is strict: it is exact in double, with or without FMA, and the second
// may fuse.
struct QuarterTurns {
  Expr r, k;  // float, int32
};
QuarterTurns quarter_turns(const Expr &x) {
  Expr ad = Halide::cast<double>(Halide::min(Halide::abs(x), 1.3e7f));
  Expr kd = Halide::round(ad * Expr(mc::kTwoOverPiD));
  Expr rd = opaque(ad - kd * Expr(mc::kHalfPiD1)) - kd * Expr(mc::kHalfPiD2);
  return {Halide::cast<float>(rd), Halide::cast<int32_t>(kd)};
}

// sin (cosine: cos) of x: sin r or cos r by quadrant, its sign from the
// quadrant (and for sin from x's).
Expr sin_cos_f32(const Expr &x, bool cosine) {
  QuarterTurns t = quarter_turns(x);
  Expr r = t.r, q = t.k + (cosine ? 1 : 0);
  Expr w = r * r;
  Expr s = opaque(r) + r * (w * horner(w, mc::kSin));
  Expr c = (1.0f - 0.5f * w) + w * w * horner(w, mc::kCos);
  Expr y = Halide::select((q & 1) == 1, c, s);
  Expr sign = Halide::cast<uint32_t>(q & 2) << u32(30);
  if (!cosine) sign = sign ^ sign_of(x);
  return replace(abs_bits(x) >= u32(kInfBits), kNanBits, from_bits(bits(y) ^ sign));
}

// atan z for z = min(|x|, 1 / |x|) <= 1, pi/2 - atan z above 1, x's sign.
Expr atan_f32(const Expr &x) {
  Expr a = Halide::abs(x);
  Expr z = Halide::min(a, 1.0f) / Halide::max(a, 1.0f);
  Expr w = z * z;
  Expr q = z * (w * horner(w, mc::kAtan));
  Expr y = Halide::select(a > 1.0f, opaque(mc::kHalfPiHi - z) + (mc::kHalfPiLo - q), opaque(z) + q);
  return keep_nan(x, with_sign_of(x, y));
}

// tan |x| = tan r for an even quadrant, -1 / tan r for an odd one, from
// sin_cos's reduction; x's sign put back.
Expr tan_f32(const Expr &x) {
  QuarterTurns q = quarter_turns(x);
  Expr r = q.r, odd = (q.k & 1) == 1;
  Expr w = r * r;
  Expr t = opaque(r) + r * (w * horner(w, mc::kTan));
  Expr y = Halide::select(odd, -1.0f / t, t);
  return replace(abs_bits(x) >= u32(kInfBits), kNanBits, from_bits(bits(y) ^ sign_of(x)));
}

// ---- asin, acos ----------------------------------------------------------------------

// asin of z = |x| up to 1/2, and of z = sqrt((1 - |x|) / 2) above (1 - |x|
// exact there): y = z + z^3 P(z^2), which asin and acos turn into theirs.
struct AsinParts {
  Expr a, big, y;
};
AsinParts asin_parts(const Expr &x) {
  Expr a = Halide::abs(x);
  Expr big = a > 0.5f;
  Expr w = Halide::select(big, opaque(1.0f - a) * 0.5f, a * a);
  Expr z = Halide::select(big, Halide::sqrt(w), a);
  return {a, big, opaque(z) + z * (w * horner(w, mc::kAsin))};
}

// |x| > 1 is NaN, NaN stays NaN.
Expr outside_unit(const Expr &x, const Expr &y) {
  return replace(abs_bits(x) > u32(0x3f800000u), Halide::select(is_nan_bits(x), bits(x), u32(kNanBits)), y);
}

// asin |x| = y below 1/2, pi/2 - 2 y above (exact by Sterbenz where 2 y >=
// pi/4); x's sign.
Expr asin_f32(const Expr &x) {
  AsinParts p = asin_parts(x);
  Expr y = Halide::select(p.big, opaque(mc::kHalfPiHi - 2.0f * p.y) + mc::kHalfPiLo, p.y);
  return outside_unit(x, with_sign_of(x, y));
}

// acos x = 2 y above 1/2, pi - 2 y below -1/2, pi/2 - asin x between.
Expr acos_f32(const Expr &x) {
  AsinParts p = asin_parts(x);
  Expr sy = with_sign_of(x, p.y);
  Expr y = Halide::select(!p.big, opaque(mc::kHalfPiHi - sy) + mc::kHalfPiLo, x > 0.0f, 2.0f * p.y,
                          opaque(mc::kPiHi - 2.0f * p.y) + mc::kPiLo);
  return outside_unit(x, y);
}

// ---- hyperbolic functions and their inverses ------------------------------------------

// sinh |x| = H + H / (2 H + 1), H = (e^|x| - 1) / 2 (no cancellation, and
// finite up to where sinh overflows; the quotient, 1/2 from there, at H
// clamped to 2^100, so that an infinite H gives no inf / inf); x itself below
// 2^-12; x's sign.
Expr sinh_f32(const Expr &x) {
  Expr a = Halide::abs(x);
  Expr h = expm1_core(Halide::min(a, 89.5f), true), hc = Halide::min(h, 1.2676506e30f);
  Expr y = Halide::select(a < 0.000244140625f, a, h + hc / (2.0f * hc + 1.0f));
  return keep_nan(x, with_sign_of(x, y));
}

// cosh x = H + 1 / (4 H), H = e^|x| / 2.
Expr cosh_f32(const Expr &x) {
  Expr h = half_exp(Halide::min(Halide::abs(x), 90.0f));
  return keep_nan(x, h + 0.25f / h);
}

// ln(1 + u) for u >= 0, plus ln 2 where twice: log1p_f32's form with one
// more in the exponent (u itself is the argument from 2^24 on).
Expr log1p_times(const Expr &u, const Expr &twice) {
  Expr big = u >= 16777216.0f;
  Decomposed d = decompose(Halide::select(big, u, 1.0f + u));
  Expr s = pow2(-d.e);
  Expr f = opaque(Halide::select(big, d.m - 1.0f, u * s - (1.0f - s)));
  return log_of_parts(d.e + Halide::select(twice, 1, 0), f);
}

// asinh |x| = log1p(a + a^2 / (1 + sqrt(1 + a^2))), and ln(2 a) from a =
// 2^24 on (where a^2 would overflow); x's sign.
Expr asinh_f32(const Expr &x) {
  Expr a = Halide::abs(x);
  Expr big = a >= 16777216.0f;
  Expr ac = Halide::min(a, 16777216.0f), a2 = ac * ac;
  Expr u = Halide::select(big, a, ac + a2 / (1.0f + Halide::sqrt(1.0f + a2)));
  Expr y = replace(abs_bits(x) == u32(kInfBits), kInfBits, log1p_times(u, big));
  return keep_nan(x, with_sign_of(x, y));
}

// acosh x = ln(x + s), s = sqrt(x^2 - 1) = sqrt(t (t + 2)) with t = x - 1
// exact, in quarters (x/4 + s/4, 2 ln 2 added back) so that nothing overflows
// and 2^-e stays a normal float: s/4 is taken at most x/4, which it becomes
// where t (t + 2) overflows. The sum's rounding error, exact by Fast2Sum (x >=
// s), is added to log's f = m - 1 scaled by 2^-e (exact), so that near x = 1,
// where acosh is about sqrt(2 t), log's argument is x + s rounded once
// relative to its distance from 1, as log1p_times' exact 1 + u gave, without
// its select of the path from 2^24 (55 -> 47 vector instructions). s's steps
// are strict, so that the sum and its error see the same s with and without
// FMA. x < 1 (-0 and negatives included) and NaN give NaN by one compare of
// x's bits shifted so that [1, +inf] is the bottom of the signed range.
Expr acosh_f32(const Expr &x) {
  Expr t = opaque(x - 1.0f);
  Expr xq = 0.25f * x;
  Expr sq = opaque(Halide::min(Halide::sqrt(t * (0.0625f * t + 0.125f)), xq));
  Expr zq = opaque(xq + sq);
  Expr err = opaque(opaque(xq - zq) + sq);
  Decomposed d = decompose(zq);
  Expr y = log_of_parts(d.e + 2, opaque(opaque(d.m - 1.0f) + err * pow2(-d.e)));
  y = replace(bits(x) == u32(kInfBits), kInfBits, y);
  // bits(x) + 2^31 - bits(1): [1, +inf] lands on [-2^31, -2^30], all else above it.
  Expr shifted = Halide::reinterpret(Halide::Int(32), bits(x) + u32(0x40800000u));
  return replace(shifted > Expr(int32_t(-0x40000000)), kNanBits, y);
}

// atanh |x|: below 1/2, a + a^3 P(a^2); from 1/2, log((1 + a) / (1 - a)) / 2,
// where 1 + a and 1 - a are exact, so that the quotient is rounded once and
// a plain log takes it (one division and log's core, against two divisions
// and log1p's exact 1 + u before). +-inf at +-1, NaN beyond.
Expr atanh_f32(const Expr &x) {
  Expr a = Halide::abs(x), w = a * a;
  Expr small = opaque(a) + a * (w * horner(w, mc::kAtanh));
  Expr ac = Halide::min(a, 0.99999994f);
  Decomposed d = decompose(opaque(1.0f + ac) / opaque(1.0f - ac));
  Expr large = 0.5f * log_of_parts(d.e, opaque(d.m - 1.0f));
  Expr y = Halide::select(a < 0.5f, small, large);
  y = replace(abs_bits(x) == u32(0x3f800000u), kInfBits, y);
  return outside_unit(x, with_sign_of(x, y));
}

// ---- pow ---------------------------------------------------------------------------

// |x|^y = 2^(y log2 |x|) for finite nonzero x, in double: log2 |x| = e +
// log1p(f) / ln 2 with |x| = 2^e (1 + f), to about 2^-40, so that y log2 |x|
// (up to +-150 where the result is a float) keeps 2^-30 absolutely; then
// 2^t = 2^k 2^r, rounded once to float.
Expr pow_magnitude(const Expr &x, const Expr &y) {
  Expr ax = Halide::abs(x);
  Expr denormal = bits(ax) < u32(0x00800000u);
  Decomposed d = decompose(Halide::select(denormal, ax * 8388608.0f, ax));
  Expr e = Halide::cast<double>(d.e - Halide::select(denormal, 23, 0));
  Expr f = Halide::cast<double>(d.m - 1.0f);
  Expr s = f / (Expr(2.0) + f);
  Expr s2 = s * s;
  Expr log2x = e + Expr(2.0 * mc::kInvLn2D) * (opaque(s) + s * (s2 * horner(s2, mc::kLogAtanhDouble)));
  Expr t = Halide::clamp(Halide::cast<double>(y) * log2x, Expr(-1000.0), Expr(1000.0));
  // k = round(t) by truncating t +- 1/2; r = t - k exactly.
  Expr k = Halide::cast<int32_t>(t + Halide::select(t < Expr(0.0), Expr(-0.5), Expr(0.5)));
  Expr r = t - Halide::cast<double>(k);
  Expr two_r = Expr(1.0) + r * horner(r, mc::kExp2Double);
  Expr two_k = Halide::reinterpret(Halide::Float(64), Halide::cast<int64_t>(k + 1023) << 52);
  return Halide::cast<float>(two_r * two_k);
}

Expr pow_f32(const Expr &x, const Expr &y) {
  // y's kind: an integer (every float of 2^24 and up is an even one), and odd.
  Expr ay = Halide::abs(y);
  Expr yi = Halide::cast<int32_t>(Halide::min(ay, 16777216.0f));
  Expr y_int = ay >= 16777216.0f || Halide::cast<float>(yi) == ay;
  Expr y_odd = ay < 16777216.0f && y_int && (yi & 1) == 1;
  Expr ux = bits(x), uy = bits(y);
  Expr ax_bits = ux & u32(kAbsMask), ay_bits = uy & u32(kAbsMask);
  Expr x_zero = ax_bits == u32(0), x_inf = ax_bits == u32(kInfBits);
  Expr y_neg = (uy & u32(kSignBit)) != u32(0), y_inf = ay_bits == u32(kInfBits);
  Expr ax_below_1 = ax_bits < u32(0x3f800000u), ax_is_1 = ax_bits == u32(0x3f800000u);
  // |x|^y for finite nonzero x and finite y; 0 or inf by the rules otherwise.
  Expr to_inf = Halide::select(x_zero, y_neg, x_inf, !y_neg, ax_below_1 == y_neg);
  Expr m = replace(x_zero || x_inf || y_inf, Halide::select(to_inf, u32(kInfBits), u32(0)), pow_magnitude(x, y));
  // Odd integer powers of negative x (-0 and -inf included) are negative.
  Expr r = from_bits(bits(m) | Halide::select(y_odd, ux & u32(kSignBit), u32(0)));
  // A negative finite x to a finite non-integer power is NaN.
  r = replace(ux > u32(kSignBit) && ux < u32(kNegInfBits) && !y_int && !y_inf, kNanBits, r);
  r = replace(is_nan_bits(x) || is_nan_bits(y), kNanBits, r);
  // pow(-1, +-inf) = 1 (x = 1 and y = 0 below take NaNs too).
  r = replace(ax_is_1 && y_inf, 0x3f800000u, r);
  return replace(ay_bits == u32(0) || ux == u32(0x3f800000u), 0x3f800000u, r);
}

}  // namespace

// ---- the library ------------------------------------------------------------------------

Expr exp(const Expr &x) {
  return by_type(x, exp_f32, [](const Expr &v) { return Halide::exp(v); });
}

Expr exp_nonpositive(const Expr &x) {
  if (!is_f32(x)) return math::exp(x);
  // biased_exp_argument's reduction, with 2^k taken as 2^(k+32) 2^-32 below
  // the normal range (k < -126): the product rounds once into the denormals'
  // spacing. Below ln(2^-150) the result rounds to 0, and is 0 times a normal
  // value: an arithmetic result in the denormals costs a microcode assist
  // (Zen 5: a causal Softmax, half its inputs -1e9, took 7x the time of an
  // unmasked one), and a mask's -1e9 or -inf is that case on every element
  // it hides. Genuine denormal results (x in [-103.97, -87.3]) still pay it.
  const Expr xc = Halide::max(x, -104.0f);
  BiasedExpArgument a = biased_exp_argument(xc);
  Expr tail = a.k < -126;
  Expr two_k = from_bits(Halide::select(tail, a.biased + u32(32), a.biased) << u32(23));
  Expr y = exp_remainder_value(exp_remainder(xc, a.kf)) * two_k;
  Expr scale = Halide::select(x < mc::kLnHalfMinDenormal, 0.0f, 2.32830644e-10f);  // 2^-32
  y = Halide::select(tail, y * scale, y);
  return keep_nan(x, y);
}

Expr exp_bounded(const Expr &x) {
  if (!is_f32(x)) return math::exp(x);
  BiasedExpArgument a = biased_exp_argument(x);
  return exp_remainder_value(exp_remainder(x, a.kf)) * a.two_k;
}

Expr expm1(const Expr &x) {
  auto f32 = [](const Expr &v) {
    Expr y = expm1_core(Halide::clamp(v, -18.0f, 89.0f));
    return replace(is_zero(v) || is_nan_bits(v), bits(v), y);
  };
  return by_type(x, f32, [](const Expr &v) { return Halide::exp(v) - Expr(1.0); });
}

Expr log(const Expr &x) {
  return by_type(x, log_f32, [](const Expr &v) { return Halide::log(v); });
}

Expr log1p(const Expr &x) {
  return by_type(x, log1p_with_specials, [](const Expr &v) { return Halide::log(Expr(1.0) + v); });
}

Expr pow(const Expr &x, const Expr &y) {
  if (is_f32(x)) return pow_f32(x, Halide::cast(x.type(), y));
  if (is_f64(x)) return Halide::pow(x, Halide::cast(x.type(), y));
  Halide::Type f = Halide::Float(32, x.type().lanes());
  return Halide::cast(x.type(), pow_f32(Halide::cast(f, x), Halide::cast(f, y)));
}

Expr pow_int(const Expr &x, int n) {
  if (!is_f32(x) && !is_f64(x)) return in_f32(x, [n](const Expr &v) { return pow_int(v, n); });
  Expr one = Halide::cast(x.type(), 1);
  if (n == 0) return one;
  // x^|n| by squaring: the product of x^(2^i) over n's set bits.
  unsigned m = n < 0 ? 0u - static_cast<unsigned>(n) : static_cast<unsigned>(n);
  Expr result, square = x;
  for (; m; m >>= 1) {
    if (m & 1) result = result.defined() ? result * square : square;
    if (m > 1) square = square * square;
  }
  return n < 0 ? one / result : result;
}

Expr sqrt(const Expr &x) { return Halide::sqrt(x); }

Expr rsqrt(const Expr &x) { return Halide::cast(x.type(), 1) / Halide::sqrt(x); }

namespace {

// Halide's max or min of a and b (`pick`), except a's NaN, else b's, where
// either is one. The NaN tests are integer compares on the bits (is_nan),
// which no float flag can fold away; LLVM folds them for a constant operand.
template <class Pick>
Expr nan_keeping(const Expr &a, const Expr &b_any, Pick pick) {
  if (!a.type().is_float()) return pick(a, b_any);
  const Expr b = Halide::cast(a.type(), b_any);  // an integer constant's bits are not a float's
  if (a.type().bits() == 16) {
    Halide::Type f = Halide::Float(32, a.type().lanes());
    return Halide::cast(a.type(), nan_keeping(Halide::cast(f, a), Halide::cast(f, b), pick));
  }
  return Halide::select(math::is_nan(a), a, math::is_nan(b), b, pick(a, b));
}

// x's magnitude bits (sign cleared) and +inf's, as unsigned integers of x's
// width (float16 and bfloat16 widened to float32, exactly): a NaN's magnitude
// is above inf's, a finite float's below.
std::pair<Expr, Expr> magnitude_and_inf(const Expr &x) {
  if (x.type().bits() == 16) return magnitude_and_inf(Halide::cast(Halide::Float(32, x.type().lanes()), x));
  if (x.type().bits() == 32) return {abs_bits(x), u32(kInfBits)};
  Expr s = Halide::reinterpret(Halide::UInt(64, x.type().lanes()), x);
  return {s & Halide::cast(s.type(), Expr(uint64_t{0x7fffffffffffffff})),
          Halide::cast(s.type(), Expr(uint64_t{0x7ff0000000000000}))};
}

}  // namespace

Expr is_nan(const Expr &x) {
  auto [magnitude, inf] = magnitude_and_inf(x);
  return magnitude > inf;
}

Expr is_finite(const Expr &x) {
  auto [magnitude, inf] = magnitude_and_inf(x);
  return magnitude < inf;
}

Expr max(const Expr &a, const Expr &b) {
  return nan_keeping(a, b, [](const Expr &p, const Expr &q) { return Halide::max(p, q); });
}

Expr min(const Expr &a, const Expr &b) {
  return nan_keeping(a, b, [](const Expr &p, const Expr &q) { return Halide::min(p, q); });
}

Expr clamp(const Expr &x, const Expr &lo, const Expr &hi) { return math::min(math::max(x, lo), hi); }

namespace {

// x's bits as a signed integer, kept for x >= +0 and with every bit but the
// sign flipped for x <= -0 (-1 - |x|'s bits), so that the integers order as
// the floats; the flip is its own inverse. An arithmetic shift of the sign
// makes the flip mask without a select.
Expr constant(const Halide::Type &t, int64_t v) { return Halide::cast(t, Expr(v)); }
int64_t all_but_sign(int bits) { return bits == 32 ? int64_t{INT32_MAX} : INT64_MAX; }
Expr flip_negative(const Expr &s) {
  return s ^ ((s >> (s.type().bits() - 1)) & constant(s.type(), all_but_sign(s.type().bits())));
}

// `nan_key` takes a NaN's place.
Expr order_key(const Expr &x, int64_t nan_key) {
  const int b = x.type().bits();
  if (!x.type().is_float() || (b != 32 && b != 64)) throw std::logic_error("order keys take float32 or float64");
  Halide::Type it = Halide::Int(b, x.type().lanes());
  return Halide::select(math::is_nan(x), constant(it, nan_key), flip_negative(Halide::reinterpret(it, x)));
}

}  // namespace

Expr max_key(const Expr &x) { return order_key(x, all_but_sign(x.type().bits())); }

Expr min_key(const Expr &x) { return order_key(x, -all_but_sign(x.type().bits()) - 1); }

Expr from_key(const Expr &key) {
  return Halide::reinterpret(Halide::Float(key.type().bits(), key.type().lanes()), flip_negative(key));
}

Expr tanh(const Expr &x) {
  return by_type(x, tanh_f32, [](const Expr &v) { return Halide::tanh(v); });
}

Expr sigmoid(const Expr &x) {
  return by_type(x, sigmoid_f32, [](const Expr &v) {
    return Expr(1.0) / (Expr(1.0) + Halide::exp(-v));
  });
}

Expr softplus(const Expr &x) {
  return by_type(x, softplus_f32, [](const Expr &v) {
    return Halide::max(v, Expr(0.0)) + Halide::log(Expr(1.0) + Halide::exp(-Halide::abs(v)));
  });
}

Expr mish(const Expr &x) {
  return by_type(x, mish_f32, [](const Expr &v) {
    return v * Halide::tanh(math::softplus(v));
  });
}

// Float64 computes in float32 too: Halide has no erf.
Expr erf(const Expr &x) { return is_f32(x) ? erf_f32(x) : in_f32(x, erf_f32); }
Expr gelu_erf(const Expr &x) { return is_f32(x) ? gelu_erf_f32(x) : in_f32(x, gelu_erf_f32); }

Expr gelu_tanh(const Expr &x) {
  return by_type(x, gelu_tanh_f32, [](const Expr &v) {
    return Expr(0.5) * v * (Expr(1.0) + Halide::tanh(Expr(0.7978845608028654) * (v + Expr(0.044715) * v * v * v)));
  });
}

Expr sin(const Expr &x) {
  auto f32 = [](const Expr &v) { return sin_cos_f32(v, false); };
  return by_type(x, f32, [](const Expr &v) { return Halide::sin(v); });
}

Expr cos(const Expr &x) {
  auto f32 = [](const Expr &v) { return sin_cos_f32(v, true); };
  return by_type(x, f32, [](const Expr &v) { return Halide::cos(v); });
}

Expr atan(const Expr &x) {
  return by_type(x, atan_f32, [](const Expr &v) { return Halide::atan(v); });
}

Expr tan(const Expr &x) {
  return by_type(x, tan_f32, [](const Expr &v) { return Halide::tan(v); });
}

Expr asin(const Expr &x) {
  return by_type(x, asin_f32, [](const Expr &v) { return Halide::asin(v); });
}

Expr acos(const Expr &x) {
  return by_type(x, acos_f32, [](const Expr &v) { return Halide::acos(v); });
}

Expr sinh(const Expr &x) {
  return by_type(x, sinh_f32, [](const Expr &v) { return Halide::sinh(v); });
}

Expr cosh(const Expr &x) {
  return by_type(x, cosh_f32, [](const Expr &v) { return Halide::cosh(v); });
}

Expr asinh(const Expr &x) {
  return by_type(x, asinh_f32, [](const Expr &v) { return Halide::asinh(v); });
}

Expr acosh(const Expr &x) {
  return by_type(x, acosh_f32, [](const Expr &v) { return Halide::acosh(v); });
}

Expr atanh(const Expr &x) {
  return by_type(x, atanh_f32, [](const Expr &v) { return Halide::atanh(v); });
}

}  // namespace disco::math
