// targets/onednn/panel_math.h, the panel product's GELU, run on plain floats
// (a fused multiply-add as the hardware's, scalef as ldexp) so that it is
// checked on every CPU, not only on AVX-512 ones: against the exact GELU,
// and against math::gelu_erf as host kernels compute it; and with the
// scale() of panel_gemm_avx2.cc, which has no scalef.
#include "targets/onednn/panel_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "lowering/host_target.h"
#include "lowering/math_library.h"
#include "targets/onednn/scalar_ops.h"

namespace disco {
namespace {

// panel_math.h's operations on one float, as the AVX-512 ones on each lane.
using Scalar = ScalarOps;

float panel_gelu(float x) { return panel_math::gelu_erf<Scalar>(x); }

// As Scalar, but scale() as panel_gemm_avx2.cc's Avx2 builds it without
// scalef: x 2^k1 2^k2 with k1 = floor(k / 2), k2 = k - k1, each power a
// normal float made from its exponent bits.
struct ScalarTwoHalves : Scalar {
  static float pow2(int k) {
    const uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  static float scale(float a, float k) {
    const int ki = static_cast<int>(k), k1 = ki >> 1, k2 = ki - k1;
    return a * pow2(k1) * pow2(k2);
  }
  static float scale_or_zero(float a, float k, float s, float least) { return s >= least ? scale(a, k) : 0.0f; }
};

// A math library function on xs as a host kernel computes it.
std::vector<float> host_eval(Halide::Expr (*fn)(const Halide::Expr &), const std::vector<float> &xs) {
  Halide::ImageParam in(Halide::Float(32), 1);
  Halide::Var i;
  Halide::Func f;
  f(i) = fn(in(i));
  f.vectorize(i, 8, Halide::TailStrategy::GuardWithIf);
  in.set(Halide::Buffer<float>(const_cast<float *>(xs.data()), static_cast<int>(xs.size())));
  std::vector<float> out(xs.size());
  Halide::Buffer<float> outb(out.data(), static_cast<int>(out.size()));
  f.realize(outb, usable_jit_target());
  return out;
}

// |got - want| in ulps of float at want.
double ulps(double got, double want) {
  int e;
  std::frexp(want, &e);
  return std::fabs(got - want) / std::ldexp(1.0, std::max(e - 24, -149));
}

// Points from `lo` to `hi` (2^20 steps) and tiny values of both signs.
std::vector<float> sweep(float lo, float hi) {
  std::vector<float> xs;
  for (int i = 0; i <= 1 << 20; ++i) xs.push_back(lo + (hi - lo) * static_cast<float>(i) / (1 << 20));
  for (float x = 1e-30f; x < 1; x *= 1.01f) xs.push_back(x), xs.push_back(-x);
  return xs;
}

// The largest distances in ulps of a panel function from the exact one and
// from the host kernels' (math library) values at the same points.
struct Distances {
  double to_exact = 0, to_host = 0;
};
template <class Panel, class Exact>
Distances distances(const std::vector<float> &xs, const std::vector<float> &host, Panel panel, Exact exact) {
  Distances d;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float p = panel(xs[i]);
    d.to_exact = std::max(d.to_exact, ulps(p, exact(double(xs[i]))));
    d.to_host = std::max(d.to_host, ulps(p, host[i]));
  }
  return d;
}

TEST(PanelMath, GeluIsWithinMathLibrarysBoundOfTheExactGeluAndOfHostKernels) {
  const std::vector<float> xs = sweep(-13.0f, 20.0f);
  const auto [to_exact, to_host] = distances(xs, host_eval(math::gelu_erf, xs), panel_gelu,
                                             [](double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); });
  EXPECT_LE(to_exact, 6.0);  // math::gelu_erf's bound
  // Each within 6 ulp of the exact GELU, by different forms since host
  // kernels' math::gelu_erf became max(x, 0) - |x| Q(|x|) (kGeluTail): 8
  // measured, at most the two bounds together.
  EXPECT_LE(to_host, 12.0);
  std::printf("[ measure  ] panel GELU: %.2f ulp from the exact GELU, %.2f ulp from math::gelu_erf\n", to_exact,
              to_host);
}

// The AVX2 form of scale() rounds once, as scalef and ldexp do, over the
// range exp_of_sum uses (k from -150 to 1, results down in the subnormals),
// so its GELU is the AVX-512 one bit for bit.
TEST(PanelMath, TheAvx2ScaleIsLdexpAndGivesTheSameGelu) {
  for (int k = -150; k <= 1; ++k)
    for (float m = 0.5f; m < 2.0f; m += 0.0078125f + 0x1p-20f)
      ASSERT_EQ(ScalarTwoHalves::scale(m, static_cast<float>(k)), std::ldexp(m, k)) << m << " 2^" << k;
  int differ = 0;
  for (int i = 0; i <= 1 << 20; ++i) {
    const float x = -16.0f + 32.0f * static_cast<float>(i) / (1 << 20);
    differ += panel_math::gelu_erf<ScalarTwoHalves>(x) != panel_gelu(x);
  }
  EXPECT_EQ(differ, 0);
}

TEST(PanelMath, GeluKeepsItsSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(panel_gelu(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(panel_gelu(inf), inf);
  EXPECT_EQ(panel_gelu(30), 30);
  for (float x : {-inf, -30.0f, -0.0f}) {
    EXPECT_EQ(panel_gelu(x), 0.0f) << x;
    EXPECT_TRUE(std::signbit(panel_gelu(x))) << x;
  }
  EXPECT_EQ(panel_gelu(0), 0.0f);
  EXPECT_FALSE(std::signbit(panel_gelu(0)));
}

// The sigmoid of the SiLU and Sigmoid epilogues: math::sigmoid's bound of
// the exact one (2.5 ulp, tests/lowering/math_library_test.cc) over its
// tested range, and its special values.
TEST(PanelMath, SigmoidIsWithinMathLibrarysBoundOfTheExactSigmoidAndOfHostKernels) {
  const std::vector<float> xs = sweep(-87.3f, 30.0f);
  const auto [to_exact, to_host] = distances(xs, host_eval(math::sigmoid, xs), panel_math::sigmoid<Scalar, float>,
                                             [](double x) { return 1 / (1 + std::exp(-x)); });
  for (float x : xs) ASSERT_EQ(panel_math::sigmoid<ScalarTwoHalves>(x), panel_math::sigmoid<Scalar>(x)) << "x = " << x;
  EXPECT_LE(to_exact, 2.5);
  EXPECT_LE(to_host, 5.0);
  std::printf("[ measure  ] panel sigmoid: %.2f ulp from the exact sigmoid, %.2f ulp from math::sigmoid\n", to_exact,
              to_host);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(panel_math::sigmoid<Scalar>(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(panel_math::sigmoid<Scalar>(-inf), 0.0f);
  EXPECT_EQ(panel_math::sigmoid<Scalar>(-200.0f), 0.0f);
  EXPECT_EQ(panel_math::sigmoid<Scalar>(inf), 1.0f);
  EXPECT_EQ(panel_math::sigmoid<Scalar>(0.0f), 0.5f);
  // Either side of ln 2^-150: the least denormal, then 0 from the mask of
  // scale_or_zero (which spares the lanes an underflow), on both scales.
  const float edge = -103.972076f, below = std::nextafter(edge, -inf);
  EXPECT_EQ(panel_math::sigmoid<Scalar>(edge), std::ldexp(1.0f, -149));
  EXPECT_EQ(panel_math::sigmoid<ScalarTwoHalves>(edge), std::ldexp(1.0f, -149));
  EXPECT_EQ(panel_math::sigmoid<Scalar>(below), 0.0f);
  EXPECT_EQ(panel_math::sigmoid<ScalarTwoHalves>(below), 0.0f);
}


// The tanh of the recurrent cells' gates (recurrent_cell.h): math::tanh's
// bound of the exact one (2.5 ulp), within an ulp or two of host kernels',
// bit for bit the same with the AVX2 scale, and its special values (-0
// gives +0 here; the cells' gates do not see the sign of a zero).
TEST(PanelMath, TanhIsWithinMathLibrarysBoundOfTheExactTanhAndOfHostKernels) {
  const std::vector<float> xs = sweep(-12.0f, 12.0f);
  const auto [to_exact, to_host] = distances(xs, host_eval(math::tanh, xs), panel_math::tanh<Scalar, float>,
                                             [](double x) { return std::tanh(x); });
  for (float x : xs) ASSERT_EQ(panel_math::tanh<ScalarTwoHalves>(x), panel_math::tanh<Scalar>(x)) << "x = " << x;
  EXPECT_LE(to_exact, 2.5);
  EXPECT_LE(to_host, 5.0);
  std::printf("[ measure  ] panel tanh: %.2f ulp from the exact tanh, %.2f ulp from math::tanh\n", to_exact, to_host);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(panel_math::tanh<Scalar>(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(panel_math::tanh<Scalar>(-inf), -1.0f);
  EXPECT_EQ(panel_math::tanh<Scalar>(inf), 1.0f);
  EXPECT_EQ(panel_math::tanh<Scalar>(30.0f), 1.0f);
  EXPECT_EQ(panel_math::tanh<Scalar>(0.0f), 0.0f);
  EXPECT_EQ(panel_math::tanh<Scalar>(1e-30f), 1e-30f);
}

}  // namespace
}  // namespace disco
