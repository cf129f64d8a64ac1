// lowering/math_library.h: each function's worst error in ulps over a dense
// sweep of its documented range, against the double-precision function, on
// the host's JIT target (FMA) and on plain x86-64 (no FMA); its special
// values, bit for bit; and that nothing lowers to a call.
#include "lowering/host_target.h"
#include "lowering/math_library.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace disco {
namespace {

using Halide::Expr;
using Unary = std::function<Expr(const Expr &)>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

Halide::Target host_target() { return usable_jit_target(); }

// Plain x86-64: SSE2 only, no FMA, so every multiply-add rounds twice.
Halide::Target plain_target() {
  Halide::Target t = host_target();
  return Halide::Target(t.os, t.arch, t.bits, {Halide::Target::JIT});
}

// fn over xs, vectorized as the host schedules vectorize.
std::vector<float> evaluate(const Unary &fn, const std::vector<float> &xs, const Halide::Target &t) {
  Halide::ImageParam in(Halide::Float(32), 1);
  Halide::Var i;
  Halide::Func f;
  f(i) = fn(in(i));
  f.vectorize(i, 8, Halide::TailStrategy::GuardWithIf);
  Halide::Buffer<float> inb(const_cast<float *>(xs.data()), static_cast<int>(xs.size()));
  in.set(inb);
  std::vector<float> out(xs.size());
  Halide::Buffer<float> outb(out.data(), static_cast<int>(out.size()));
  f.realize(outb, t);
  return out;
}

std::vector<float> evaluate2(const std::function<Expr(const Expr &, const Expr &)> &fn, const std::vector<float> &xs,
                             const std::vector<float> &ys, const Halide::Target &t) {
  Halide::ImageParam a(Halide::Float(32), 1), b(Halide::Float(32), 1);
  Halide::Var i;
  Halide::Func f;
  f(i) = fn(a(i), b(i));
  f.vectorize(i, 8, Halide::TailStrategy::GuardWithIf);
  a.set(Halide::Buffer<float>(const_cast<float *>(xs.data()), static_cast<int>(xs.size())));
  b.set(Halide::Buffer<float>(const_cast<float *>(ys.data()), static_cast<int>(ys.size())));
  std::vector<float> out(xs.size());
  Halide::Buffer<float> outb(out.data(), static_cast<int>(out.size()));
  f.realize(outb, t);
  return out;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Floats in order as integers: negative floats below positive ones, -0 = +0.
int64_t order_of(float f) {
  uint32_t u = bits_of(f);
  return (u & 0x80000000u) ? -static_cast<int64_t>(u & 0x7fffffffu) : static_cast<int64_t>(u);
}
float float_at(int64_t k) { return k < 0 ? float_of(static_cast<uint32_t>(-k) | 0x80000000u) : float_of(k); }

// About n floats of [lo, hi], every stride-th in order (so each binade gets
// its share), both ends included.
std::vector<float> sweep(float lo, float hi, int64_t n) {
  const int64_t a = order_of(lo), b = order_of(hi);
  const int64_t stride = std::max<int64_t>(1, (b - a) / n) | 1;  // odd: the low bits vary
  std::vector<float> xs;
  for (int64_t k = a; k < b; k += stride) xs.push_back(float_at(k));
  xs.push_back(hi);
  return xs;
}

// |got - want| in ulps of float at want (denormal spacing below 2^-126).
double ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  if (std::isinf(want) || std::fabs(want) > std::numeric_limits<float>::max())
    return std::isinf(got) && (got > 0) == (want > 0) ? 0 : std::numeric_limits<double>::infinity();
  if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
  int e;
  std::frexp(want, &e);
  const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

struct Worst {
  double ulps = 0;
  float x = 0, y = 0;
  float got = 0;
  double want = 0;
  std::string str() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.3f ulp at x = %.9g (y = %.9g): got %.9g, want %.12g", ulps, x, y, got, want);
    return buf;
  }
};

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double softplus_ref(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }
double mish_ref(double x) { return x * std::tanh(softplus_ref(x)); }
double gelu_erf_ref(double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double gelu_tanh_ref(double x) { return x / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }

struct AccuracyCase {
  std::string name;
  Unary fn;
  double (*ref)(double);
  float lo, hi;
  double fma_bound, plain_bound;  // the header's, in ulps, with FMA and without
};

std::ostream &operator<<(std::ostream &os, const AccuracyCase &c) { return os << c.name; }

Unary pow_int(int n) {
  return [n](const Expr &x) { return math::pow_int(x, n); };
}

// The bounds and ranges of math_library.h, each split where it names a range.
std::vector<AccuracyCase> accuracy_cases() {
  const float big = std::numeric_limits<float>::max();
  auto exp = [](double x) { return std::exp(x); };
  return {
      {"exp", math::exp, exp, -87.3f, 88.7f, 1, 1.75},
      {"exp_denormal_results", math::exp, exp, -103.9f, -87.4f, 1, 1},
      {"exp_nonpositive", math::exp_nonpositive, exp, -87.0f, 0.0f, 1, 1.75},
      {"exp_nonpositive_denormal_results", math::exp_nonpositive, exp, -103.9f, -87.4f, 1, 1},
      {"exp_bounded", math::exp_bounded, exp, -87.0f, 87.0f, 1, 1.75},
      {"expm1", math::expm1, [](double x) { return std::expm1(x); }, -17.0f, 88.7f, 1.5, 1.5},
      {"log", math::log, [](double x) { return std::log(x); }, 1e-45f, big, 1, 1.75},
      {"log1p", math::log1p, [](double x) { return std::log1p(x); }, -0.99999994f, big, 1, 1.25},
      {"tanh", math::tanh, [](double x) { return std::tanh(x); }, -20.0f, 20.0f, 2.5, 2.5},
      {"sigmoid", math::sigmoid, sigmoid_ref, -87.3f, 30.0f, 2.5, 3},
      {"softplus", math::softplus, softplus_ref, -87.3f, 1e6f, 2, 2.5},
      {"mish", math::mish, mish_ref, -87.3f, 1e6f, 4.5, 4.5},
      {"erf", math::erf, [](double x) { return std::erf(x); }, -5.0f, 5.0f, 1.25, 1.25},
      {"gelu_erf", math::gelu_erf, gelu_erf_ref, -13.0f, 20.0f, 5, 6},
      {"gelu_tanh", math::gelu_tanh, gelu_tanh_ref, -3.0f, 20.0f, 12, 12},
      {"gelu_tanh_negative", math::gelu_tanh, gelu_tanh_ref, -9.0f, -3.0f, 256, 256},
      {"sin", math::sin, [](double x) { return std::sin(x); }, -1.3e7f, 1.3e7f, 1.6, 1.6},
      {"cos", math::cos, [](double x) { return std::cos(x); }, -1.3e7f, 1.3e7f, 1.6, 1.6},
      {"atan", math::atan, [](double x) { return std::atan(x); }, -big, big, 1.5, 1.5},
      {"tan", math::tan, [](double x) { return std::tan(x); }, -1.3e7f, 1.3e7f, 2.5, 2.5},
      {"asin", math::asin, [](double x) { return std::asin(x); }, -1.0f, 1.0f, 2, 2},
      {"acos", math::acos, [](double x) { return std::acos(x); }, -1.0f, 1.0f, 1.5, 1.5},
      {"sinh", math::sinh, [](double x) { return std::sinh(x); }, -89.5f, 89.5f, 3, 3},
      {"cosh", math::cosh, [](double x) { return std::cosh(x); }, -89.5f, 89.5f, 2.5, 2.5},
      {"asinh", math::asinh, [](double x) { return std::asinh(x); }, -big, big, 2, 2},
      {"acosh", math::acosh, [](double x) { return std::acosh(x); }, 1.0f, big, 2.5, 2.5},
      // Every float of [1, 1.1], where acosh is about sqrt(2 (x - 1)) and its error the largest.
      {"acosh_near_1", math::acosh, [](double x) { return std::acosh(x); }, 1.0f, 1.1f, 2.5, 2.5},
      {"atanh", math::atanh, [](double x) { return std::atanh(x); }, -0.99999994f, 0.99999994f, 2.5, 2.5},
      {"rsqrt", math::rsqrt, [](double x) { return 1 / std::sqrt(x); }, 1e-45f, big, 1.5, 1.5},
      {"pow_int_2", pow_int(2), [](double x) { return x * x; }, -1e19f, 1e19f, 0.5, 0.5},
      {"pow_int_minus_1", pow_int(-1), [](double x) { return 1 / x; }, -1e38f, 1e38f, 0.5, 0.5},
      {"pow_int_3", pow_int(3), [](double x) { return x * x * x; }, -1e12f, 1e12f, 1.5, 1.5},
      {"pow_int_minus_2", pow_int(-2), [](double x) { return 1 / (x * x); }, 1e-18f, 1e18f, 1.5, 1.5},
      {"pow_int_4", pow_int(4), [](double x) { return x * x * x * x; }, -1e9f, 1e9f, 2, 2},
      {"pow_int_minus_3", pow_int(-3), [](double x) { return 1 / (x * x * x); }, 1e-12f, 1e12f, 2.5, 2.5},
      {"pow_int_minus_4", pow_int(-4), [](double x) { return 1 / (x * x * x * x); }, 1e-9f, 1e9f, 3.5, 3.5},
  };
}

Worst measure(const AccuracyCase &c, const Halide::Target &t, int64_t n) {
  std::vector<float> xs = sweep(c.lo, c.hi, n);
  std::vector<float> got = evaluate(c.fn, xs, t);
  Worst w;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = c.ref(xs[i]);
    if (std::fabs(want) < 1e-45 && want != 0) continue;  // below float's reach
    const double e = ulps(got[i], want);
    if (!(e <= w.ulps)) w = {e, xs[i], 0, got[i], want};
  }
  return w;
}

class MathLibraryAccuracy : public ::testing::TestWithParam<AccuracyCase> {};

TEST_P(MathLibraryAccuracy, IsWithinItsDocumentedBoundWithFma) {
  const AccuracyCase &c = GetParam();
  Worst w = measure(c, host_target(), 1 << 21);
  EXPECT_LE(w.ulps, c.fma_bound) << c.name << ": " << w.str();
  std::printf("[ measure  ] %s (host): %s\n", c.name.c_str(), w.str().c_str());
}

TEST_P(MathLibraryAccuracy, IsWithinItsDocumentedBoundWithoutFma) {
  const AccuracyCase &c = GetParam();
  Worst w = measure(c, plain_target(), 1 << 19);
  EXPECT_LE(w.ulps, c.plain_bound) << c.name << ": " << w.str();
  std::printf("[ measure  ] %s (x86-64): %s\n", c.name.c_str(), w.str().c_str());
}

INSTANTIATE_TEST_SUITE_P(Functions, MathLibraryAccuracy, ::testing::ValuesIn(accuracy_cases()),
                         [](const ::testing::TestParamInfo<AccuracyCase> &i) { return i.param.name; });

// pow over pairs whose result is a normal float: |x| in [2^-30, 2^30] and y
// in [-40, 40], negative x with integer y, and x near 1 with large y.
TEST(MathLibraryPow, IsWithinOneUlpWhereTheResultIsNormal) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> log2x(-30, 30), yd(-40, 40), near1(-1e-3f, 1e-3f), ybig(-5e4f, 5e4f);
  std::vector<float> xs, ys;
  for (int i = 0; i < (1 << 20); ++i) {
    float x = std::exp2(log2x(rng)), y = yd(rng);
    switch (i % 4) {
      case 1:
        x = -x, y = std::round(y);
        break;  // negative x, integer y
      case 2:
        x = 1 + near1(rng), y = ybig(rng);
        break;
      case 3:
        y = std::round(y * 4) / 4;
        break;
      default:
        break;
    }
    xs.push_back(x), ys.push_back(y);
  }
  for (const Halide::Target &t : {host_target(), plain_target()}) {
    std::vector<float> got = evaluate2(math::pow, xs, ys, t);
    Worst w;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = std::pow(static_cast<double>(xs[i]), static_cast<double>(ys[i]));
      if (std::fabs(want) < 0x1p-126 || std::fabs(want) > std::numeric_limits<float>::max()) continue;
      const double e = ulps(got[i], want);
      if (!(e <= w.ulps)) w = {e, xs[i], ys[i], got[i], want};
    }
    EXPECT_LE(w.ulps, 1.0) << t.to_string() << ": " << w.str();
    std::printf("[ measure  ] pow (%s): %s\n", t.to_string().c_str(), w.str().c_str());
  }
}

// ---- special values ---------------------------------------------------------------

// Same bits, or both NaN.
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b); }

struct Special {
  float x, want;
};

void expect_specials(const char *name, const Unary &fn, const std::vector<Special> &cases) {
  std::vector<float> xs;
  for (const Special &s : cases) xs.push_back(s.x);
  for (const Halide::Target &t : {host_target(), plain_target()}) {
    std::vector<float> got = evaluate(fn, xs, t);
    for (size_t i = 0; i < cases.size(); ++i)
      EXPECT_TRUE(same(got[i], cases[i].want))
          << name << "(" << cases[i].x << ") = " << got[i] << ", want " << cases[i].want << " on " << t.to_string();
  }
}

// ln 2^-150 rounded up, where e^x is 2^-149 (the least denormal), and the float below it, where e^x rounds to 0.
const float kLnHalfMinDenormal = -103.972076f;
const float kBelowLnHalfMinDenormal = std::nextafter(kLnHalfMinDenormal, -kInf);

TEST(MathLibrarySpecialValues, ExpAndLogMatchCsFloatFunctions) {
  ASSERT_EQ(std::exp(kLnHalfMinDenormal), std::ldexp(1.0f, -149));
  ASSERT_EQ(std::exp(kBelowLnHalfMinDenormal), 0.0f);
  expect_specials("exp", math::exp,
                  {{kNan, kNan},
                   {-kInf, 0},
                   {kInf, kInf},
                   {-0.0f, 1},
                   {0, 1},
                   {88.8f, kInf},
                   {-104, 0},
                   {-1000, 0},
                   {1000, kInf},
                   {-100, std::exp(-100.0f)},
                   // Either side of ln 2^-150, below which the result is 0 (not an underflowing product).
                   {kLnHalfMinDenormal, std::exp(kLnHalfMinDenormal)},
                   {kBelowLnHalfMinDenormal, 0}});
  expect_specials("exp_nonpositive", math::exp_nonpositive,
                  {{kNan, kNan},
                   {0, 1},
                   {-0.0f, 1},
                   {-kInf, 0},
                   {-200, 0},
                   {-104, 0},
                   {-1e9f, 0},
                   {kLnHalfMinDenormal, std::exp(kLnHalfMinDenormal)},
                   {kBelowLnHalfMinDenormal, 0}});
  expect_specials("exp_bounded", math::exp_bounded, {{kNan, kNan}, {0, 1}});
  expect_specials("expm1", math::expm1,
                  {{kNan, kNan},
                   {-kInf, -1},
                   {kInf, kInf},
                   {-0.0f, -0.0f},
                   {0, 0},
                   {89, kInf},
                   {-30, -1},
                   {1e-30f, 1e-30f},
                   {-1e-40f, -1e-40f}});
  expect_specials("log", math::log,
                  {{kNan, kNan},
                   {-kNan, kNan},
                   {0, -kInf},
                   {-0.0f, -kInf},
                   {-1, kNan},
                   {-kInf, kNan},
                   {kInf, kInf},
                   {1, 0},
                   {1e-45f, std::log(1e-45f)}});
  expect_specials("log1p", math::log1p,
                  {{kNan, kNan},
                   {-1, -kInf},
                   {-2, kNan},
                   {-kInf, kNan},
                   {kInf, kInf},
                   {0, 0},
                   {-0.0f, -0.0f},
                   {1e-30f, 1e-30f},
                   {-1e-40f, -1e-40f}});
  expect_specials("rsqrt", math::rsqrt, {{0, kInf}, {-0.0f, -kInf}, {-1, kNan}, {kInf, 0}, {kNan, kNan}, {4, 0.5f}});
  expect_specials("sqrt", math::sqrt, {{-0.0f, -0.0f}, {-1, kNan}, {kInf, kInf}, {4, 2}});
}

TEST(MathLibrarySpecialValues, ActivationsHaveTheirLimitsAndKeepNegativeZero) {
  expect_specials("tanh", math::tanh,
                  {{kNan, kNan}, {kInf, 1}, {-kInf, -1}, {0, 0}, {-0.0f, -0.0f}, {1e-30f, 1e-30f}, {-50, -1}});
  expect_specials("sigmoid", math::sigmoid, {{kNan, kNan}, {-kInf, 0}, {kInf, 1}, {0, 0.5f}, {-200, 0}, {50, 1}});
  expect_specials(
      "softplus", math::softplus,
      {{kNan, kNan}, {-kInf, 0}, {kInf, kInf}, {1e30f, 1e30f}, {100, 100}, {20.5f, 20.5f}, {-200, 0}, {-87.4f, 0}});
  expect_specials("mish", math::mish,
                  {{kNan, kNan}, {-kInf, -0.0f}, {kInf, kInf}, {0, 0}, {-0.0f, -0.0f}, {1e30f, 1e30f}, {-300, -0.0f}});
  expect_specials("erf", math::erf, {{kNan, kNan}, {kInf, 1}, {-kInf, -1}, {0, 0}, {-0.0f, -0.0f}, {10, 1}, {-4, -1}});
  expect_specials("gelu_erf", math::gelu_erf,
                  {{kNan, kNan},
                   {kInf, kInf},
                   {-kInf, -0.0f},
                   {0, 0},
                   {-0.0f, -0.0f},
                   {30, 30},
                   {-30, -0.0f},
                   {13.5f, 13.5f},
                   {-13.5f, -0.0f}});
  expect_specials(
      "gelu_tanh", math::gelu_tanh,
      {{kNan, kNan}, {kInf, kInf}, {-kInf, -0.0f}, {0, 0}, {-0.0f, -0.0f}, {30, 30}, {-30, -0.0f}, {-10.5f, -0.0f}});
}

TEST(MathLibrarySpecialValues, TrigonometryMatchesCsFloatFunctions) {
  const float half_pi = static_cast<float>(M_PI / 2);
  expect_specials("sin", math::sin, {{kNan, kNan}, {kInf, kNan}, {-kInf, kNan}, {0, 0}, {-0.0f, -0.0f}});
  expect_specials("cos", math::cos, {{kNan, kNan}, {kInf, kNan}, {-kInf, kNan}, {0, 1}, {-0.0f, 1}});
  expect_specials("atan", math::atan,
                  {{kNan, kNan}, {kInf, half_pi}, {-kInf, -half_pi}, {0, 0}, {-0.0f, -0.0f}, {1e30f, half_pi}});
  const float pi = static_cast<float>(M_PI);
  expect_specials("tan", math::tan, {{kNan, kNan}, {kInf, kNan}, {-kInf, kNan}, {0, 0}, {-0.0f, -0.0f}});
  expect_specials("asin", math::asin,
                  {{kNan, kNan},
                   {0, 0},
                   {-0.0f, -0.0f},
                   {1, half_pi},
                   {-1, -half_pi},
                   {1.0000001f, kNan},
                   {-2, kNan},
                   {kInf, kNan},
                   {-kInf, kNan}});
  expect_specials("acos", math::acos,
                  {{kNan, kNan},
                   {1, 0},
                   {-1, pi},
                   {0, half_pi},
                   {-0.0f, half_pi},
                   {1.0000001f, kNan},
                   {-2, kNan},
                   {kInf, kNan},
                   {-kInf, kNan}});
  // Far beyond the documented range the result is still a sine.
  for (float x : {1e10f, 3e38f}) {
    std::vector<float> got = evaluate(math::sin, {x, -x}, host_target());
    EXPECT_LE(std::fabs(got[0]), 1.0f) << x;
    EXPECT_EQ(got[0], -got[1]) << x;
  }
}

TEST(MathLibrarySpecialValues, HyperbolicFunctionsMatchCsFloatFunctions) {
  const float big = std::numeric_limits<float>::max();
  expect_specials("sinh", math::sinh,
                  {{kNan, kNan},
                   {kInf, kInf},
                   {-kInf, -kInf},
                   {0, 0},
                   {-0.0f, -0.0f},
                   {1e-30f, 1e-30f},
                   {-1e-40f, -1e-40f},
                   {89.5f, kInf},
                   {-89.5f, -kInf},
                   {1000, kInf}});
  expect_specials("cosh", math::cosh,
                  {{kNan, kNan}, {kInf, kInf}, {-kInf, kInf}, {0, 1}, {-0.0f, 1}, {89.5f, kInf}, {-1000, kInf}});
  expect_specials("asinh", math::asinh,
                  {{kNan, kNan},
                   {kInf, kInf},
                   {-kInf, -kInf},
                   {0, 0},
                   {-0.0f, -0.0f},
                   {1e-30f, 1e-30f},
                   {-1e-40f, -1e-40f},
                   {big, std::asinh(big)}});
  expect_specials("acosh", math::acosh,
                  {{kNan, kNan},
                   {kInf, kInf},
                   {-kInf, kNan},
                   {1, 0},
                   {0.99999994f, kNan},
                   {0, kNan},
                   {-0.0f, kNan},
                   {-1, kNan},
                   {big, std::acosh(big)}});
  expect_specials("atanh", math::atanh,
                  {{kNan, kNan},
                   {1, kInf},
                   {-1, -kInf},
                   {0, 0},
                   {-0.0f, -0.0f},
                   {1e-30f, 1e-30f},
                   {-1e-40f, -1e-40f},
                   {1.0000001f, kNan},
                   {-2, kNan},
                   {kInf, kNan},
                   {-kInf, kNan}});
}

// C99 F.9.4.4 and numpy's float32 power.
TEST(MathLibrarySpecialValues, PowFollowsAnnexF) {
  struct Case {
    float x, y, want;
  };
  const std::vector<Case> cases = {
      {kNan, 0, 1},         {kNan, -0.0f, 1},     {1, kNan, 1},        {1, kInf, 1},         {-1, kInf, 1},
      {-1, -kInf, 1},       {kNan, 1, kNan},      {2, kNan, kNan},     {-2, 0.5f, kNan},     {-2, -1.5f, kNan},
      {-2, 3, -8},          {-2, 2, 4},           {-2, -1, -0.5f},     {0, -3, kInf},        {-0.0f, -3, -kInf},
      {-0.0f, -2, kInf},    {-0.0f, -0.5f, kInf}, {0, -kInf, kInf},    {-0.0f, -kInf, kInf}, {0, 3, 0},
      {-0.0f, 3, -0.0f},    {-0.0f, 2, 0},        {-0.0f, 0.5f, 0},    {0.5f, -kInf, kInf},  {2, -kInf, 0},
      {-0.5f, -kInf, kInf}, {0.5f, kInf, 0},      {-2, kInf, kInf},    {-kInf, -3, -0.0f},   {-kInf, -2, 0},
      {-kInf, 3, -kInf},    {-kInf, 2, kInf},     {-kInf, 0.5f, kInf}, {kInf, -1, 0},        {kInf, 0.5f, kInf},
      {2, 200, kInf},       {2, -200, 0},         {-2, 129, -kInf},    {-2, -151, -0.0f},    {4, 0.5f, 2},
      {2, -149, 0x1p-149f}, {-3, 1e30f, kInf},    {-0.5f, 1e30f, 0},   {10, 38, 1e38f},
  };
  std::vector<float> xs, ys;
  for (const Case &c : cases) xs.push_back(c.x), ys.push_back(c.y);
  for (const Halide::Target &t : {host_target(), plain_target()}) {
    std::vector<float> got = evaluate2(math::pow, xs, ys, t);
    for (size_t i = 0; i < cases.size(); ++i)
      EXPECT_TRUE(same(got[i], cases[i].want) || (std::isfinite(cases[i].want) && ulps(got[i], cases[i].want) <= 1))
          << "pow(" << cases[i].x << ", " << cases[i].y << ") = " << got[i] << ", want " << cases[i].want << " on "
          << t.to_string();
  }
  std::vector<float> zero =
      evaluate([](const Expr &x) { return math::pow_int(x, 0); }, {kNan, 0, -kInf}, host_target());
  for (float v : zero) EXPECT_EQ(v, 1.0f);
}

// ---- max, min and fold keys --------------------------------------------------------------

// NaN operands win, on both targets (the selects must survive the no-NaNs
// flags with and without AVX); -0 against +0 may come out either way.
TEST(MathLibraryMaxMin, ANanOperandIsReturnedAndOtherwiseTheyAreMaxAndMin) {
  const std::vector<float> vals{kNan, -kNan, -kInf, -2.5f, -0.0f, 0.0f, 1e-40f, 3.0f, kInf};
  std::vector<float> xs, ys;
  for (float a : vals)
    for (float b : vals) xs.push_back(a), ys.push_back(b);
  for (const Halide::Target &t : {host_target(), plain_target()}) {
    auto mx = evaluate2([](const Expr &a, const Expr &b) { return math::max(a, b); }, xs, ys, t);
    auto mn = evaluate2([](const Expr &a, const Expr &b) { return math::min(a, b); }, xs, ys, t);
    auto cl = evaluate([](const Expr &a) { return math::clamp(a, Expr(-1.0f), Expr(1.0f)); }, xs, t);
    for (size_t i = 0; i < xs.size(); ++i) {
      const float a = xs[i], b = ys[i];
      const std::string at = std::to_string(a) + ", " + std::to_string(b);
      if (std::isnan(a) || std::isnan(b)) {
        EXPECT_TRUE(std::isnan(mx[i])) << "max(" << at << ") = " << mx[i];
        EXPECT_TRUE(std::isnan(mn[i])) << "min(" << at << ") = " << mn[i];
      } else {
        EXPECT_EQ(mx[i], std::max(a, b)) << "max(" << at << ")";
        EXPECT_EQ(mn[i], std::min(a, b)) << "min(" << at << ")";
      }
      if (std::isnan(a))
        EXPECT_TRUE(std::isnan(cl[i])) << "clamp(" << a << ")";
      else
        EXPECT_EQ(cl[i], std::min(std::max(a, -1.0f), 1.0f)) << "clamp(" << a << ")";
    }
  }
}

// Keys order as the floats (-0 below +0), NaNs at the top (max_key) or the
// bottom (min_key), and from_key undoes them.
TEST(MathLibraryMaxMin, FoldKeysOrderAsTheFloatsWithNansAtTheEnd) {
  const std::vector<float> ordered{-kInf, -3.4e38f, -2.5f, -1e-40f, -0.0f, 0.0f, 1e-45f, 1e-40f, 1.0f, 3.4e38f, kInf};
  std::vector<float> xs = ordered;
  xs.push_back(kNan);
  xs.push_back(-kNan);
  xs.push_back(float_of(0x7f800001u));  // a signalling-pattern NaN
  Halide::ImageParam in(Halide::Float(32), 1);
  Halide::Var i;
  Halide::Func f;
  f(i) = {math::max_key(in(i)), math::min_key(in(i)), math::from_key(math::max_key(in(i))),
          math::from_key(math::min_key(in(i)))};
  f.vectorize(i, 8, Halide::TailStrategy::GuardWithIf);
  in.set(Halide::Buffer<float>(xs.data(), static_cast<int>(xs.size())));
  Halide::Realization r = f.realize({static_cast<int>(xs.size())}, host_target());
  Halide::Buffer<int32_t> mxk = r[0], mnk = r[1];
  Halide::Buffer<float> back_max = r[2], back_min = r[3];
  const int n = static_cast<int>(ordered.size());
  for (int k = 0; k + 1 < n; ++k) {
    EXPECT_LT(mxk(k), mxk(k + 1)) << ordered[k] << " < " << ordered[k + 1];
    EXPECT_LT(mnk(k), mnk(k + 1)) << ordered[k] << " < " << ordered[k + 1];
  }
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(bits_of(back_max(k)), bits_of(ordered[k])) << ordered[k];
    EXPECT_EQ(bits_of(back_min(k)), bits_of(ordered[k])) << ordered[k];
  }
  for (int k = n; k < static_cast<int>(xs.size()); ++k) {
    EXPECT_GT(mxk(k), mxk(n - 1)) << "NaN " << k << " is above +inf";
    EXPECT_LT(mnk(k), mnk(0)) << "NaN " << k << " is below -inf";
    EXPECT_TRUE(std::isnan(back_max(k)) && std::isnan(back_min(k))) << k;
  }
}

// float64 takes Halide's is_nan and 64-bit keys: a NaN still wins, keys order.
TEST(MathLibraryMaxMin, Float64KeepsNansAndOrdersItsKeys) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> xs{nan, -inf, -1e300, -0.0, 0.0, 1e-310, 2.5, inf, -nan};
  Halide::Buffer<double> in(const_cast<double *>(xs.data()), static_cast<int>(xs.size()));
  Halide::Var i;
  Halide::Func f;
  Expr x = in(i), two = Expr(2.0);
  f(i) = {math::max(x, two), math::min(x, two), math::max_key(x), math::min_key(x), math::from_key(math::max_key(x))};
  f.vectorize(i, 4, Halide::TailStrategy::GuardWithIf);
  Halide::Realization r = f.realize({static_cast<int>(xs.size())}, host_target());
  Halide::Buffer<double> mx = r[0], mn = r[1], back = r[4];
  Halide::Buffer<int64_t> mxk = r[2], mnk = r[3];
  for (int k = 0; k < static_cast<int>(xs.size()); ++k) {
    if (std::isnan(xs[k])) {
      EXPECT_TRUE(std::isnan(mx(k))) << k << ": " << mx(k);
      EXPECT_TRUE(std::isnan(mn(k))) << k << ": " << mn(k);
      EXPECT_TRUE(std::isnan(back(k))) << k << ": " << back(k);
      EXPECT_GT(mxk(k), mxk(7)) << "NaN " << k << " above +inf";
      EXPECT_LT(mnk(k), mnk(1)) << "NaN " << k << " below -inf";
    } else {
      EXPECT_EQ(mx(k), std::max(xs[k], 2.0)) << k;
      EXPECT_EQ(mn(k), std::min(xs[k], 2.0)) << k;
      EXPECT_EQ(back(k), xs[k]) << k;
      EXPECT_EQ(std::signbit(back(k)), std::signbit(xs[k])) << k;
    }
  }
  for (int k = 1; k + 1 < 8; ++k) EXPECT_LT(mxk(k), mxk(k + 1)) << xs[k] << " < " << xs[k + 1];
}

// ---- other types, and no calls ----------------------------------------------------------

TEST(MathLibraryTypes, HalfComputesInFloatAndDoubleFallsBackToHalide) {
  Halide::Func f;
  Halide::Var i;
  Expr h = Halide::cast(Halide::Float(16), 0.5f + Halide::cast<float>(i));
  Expr d = Halide::cast<double>(0.5f + Halide::cast<float>(i));
  f(i) = {Halide::cast<float>(math::tanh(h)), Halide::cast<float>(math::erf(d)),
          Halide::cast<float>(math::pow(d, Expr(2.5)))};
  Halide::Realization r = f.realize({4});
  Halide::Buffer<float> th = r[0], er = r[1], pw = r[2];
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(th(k), std::tanh(0.5 + k), 1e-3) << k;
    EXPECT_NEAR(er(k), std::erf(0.5 + k), 1e-7) << k;
    EXPECT_NEAR(pw(k), std::pow(0.5 + k, 2.5), 1e-5 * std::pow(0.5 + k, 2.5)) << k;
  }
}

// Halide's own exp, log, tanh, ... are calls (exp_f32, ...) in the lowered
// code; the library's are arithmetic.
TEST(MathLibraryTypes, NothingLowersToACall) {
  const std::vector<std::pair<const char *, Unary>> fns = {
      {"exp", math::exp},
      {"expm1", math::expm1},
      {"log", math::log},
      {"log1p", math::log1p},
      {"tanh", math::tanh},
      {"sigmoid", math::sigmoid},
      {"softplus", math::softplus},
      {"mish", math::mish},
      {"erf", math::erf},
      {"gelu_erf", math::gelu_erf},
      {"gelu_tanh", math::gelu_tanh},
      {"sin", math::sin},
      {"cos", math::cos},
      {"atan", math::atan},
      {"tan", math::tan},
      {"asin", math::asin},
      {"acos", math::acos},
      {"sinh", math::sinh},
      {"cosh", math::cosh},
      {"asinh", math::asinh},
      {"acosh", math::acosh},
      {"atanh", math::atanh},
      {"rsqrt", math::rsqrt},
      {"pow", [](const Expr &x) { return math::pow(x, x + 1.0f); }},
  };
  const std::string path = ::testing::TempDir() + "math_library_test.stmt";
  for (const auto &[name, fn] : fns) {
    Halide::ImageParam in(Halide::Float(32), 1);
    Halide::Var i;
    Halide::Func f;
    f(i) = fn(in(i));
    f.vectorize(i, 8);
    f.compile_to_lowered_stmt(path, {in}, Halide::Text, host_target());
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    for (const char *call : {"exp_f", "log_f", "tanh_f", "sin_f", "cos_f", "tan_f", "asin_f", "acos_f", "atan_f",
                             "sinh_f", "cosh_f", "pow_f", "sqrt_f"}) {
      if (std::string(call) == "sqrt_f") continue;  // Halide's sqrt is one vector instruction
      EXPECT_EQ(text.str().find(call), std::string::npos) << name << " calls " << call;
    }
  }
}

}  // namespace
}  // namespace disco
