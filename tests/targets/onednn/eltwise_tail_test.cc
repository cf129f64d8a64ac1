// The oneDNN steps' eltwise tail (targets/onednn/eltwise_tail.h): which
// post-ops leave the primitive, the vector pass against double-precision
// references and special values, and conv steps that end in SiLU or Sigmoid
// against a plain-loop convolution, with the tail and without it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "targets/onednn/eltwise_tail.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

bool vector_cpu() { return panel_gemm_cpu() || panel_gemm_avx2_cpu(); }

Epilogue with_ops(std::vector<OnednnPostOp> ops) {
  Epilogue e;
  static const float operand = 1.0f;
  for (const auto &op : ops) {
    e.ops.push_back(op);
    if (op.num_operands() == 1) {
      e.operands.push_back({&operand, {1, 1}});
      e.inputs.push_back(-1);
    }
  }
  return e;
}

std::vector<OnednnPostOp::Kind> kinds(const std::vector<OnednnPostOp> &ops) {
  std::vector<OnednnPostOp::Kind> k;
  for (const auto &op : ops) k.push_back(op.kind);
  return k;
}

TEST(EltwiseTail, TakesTheUnaryEndFromTheFirstSigmoidSwishOrGelu) {
  if (!vector_cpu()) GTEST_SKIP() << "no AVX-512 or AVX2 with FMA: the tail stays in oneDNN";
  using K = OnednnPostOp;
  struct Case {
    std::vector<OnednnPostOp> ops;
    std::vector<K::Kind> kept;   // what oneDNN still runs
    std::vector<PanelOp::Kind> tail;
  };
  const std::vector<Case> cases = {
      {{{K::Add}, {K::Swish, 1}}, {K::Add}, {PanelOp::Swish}},
      {{{K::Linear, 2, 1}, {K::Sigmoid}, {K::Linear, 0.5, 0}}, {K::Linear}, {PanelOp::Sigmoid, PanelOp::Linear}},
      {{{K::Relu, 0}, {K::GeluErf}}, {K::Relu}, {PanelOp::GeluErf}},
      // A binary step after the sigmoid: the whole chain stays in oneDNN.
      {{{K::Sigmoid}, {K::Mul}}, {K::Sigmoid, K::Mul}, {}},
      // Nothing costly: cheap steps gain nothing from a pass of their own.
      {{{K::Relu, 0}, {K::Linear, 2, 0}, {K::HardSwish}}, {K::Relu, K::Linear, K::HardSwish}, {}},
      // Tanh and Clip have no panel step: nothing before them can leave either.
      {{{K::Swish, 1}, {K::Tanh}}, {K::Swish, K::Tanh}, {}},
      {{{K::Sigmoid}, {K::Clip, 0, 1}}, {K::Sigmoid, K::Clip}, {}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    Epilogue e = with_ops(cases[i].ops);
    const size_t operands = e.operands.size();
    const EltwiseTail t = take_eltwise_tail(e);
    EXPECT_EQ(kinds(e.ops), cases[i].kept) << "case " << i;
    EXPECT_EQ(e.operands.size(), operands) << "case " << i;
    std::vector<PanelOp::Kind> got;
    for (const auto &p : t.ops) got.push_back(p.kind);
    EXPECT_EQ(got, cases[i].tail) << "case " << i;
  }
  Epilogue e = with_ops({{OnednnPostOp::Swish, 1}});
  const EltwiseTail t = take_eltwise_tail(e);
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.ops[0].a, 1.0f);  // the sigmoid's scaling travels with the step
}

TEST(EltwiseTail, DisabledByTheEnvironmentLeavesTheEpilogueWhole) {
  ::setenv("DISCO_ELTWISE_TAIL", "0", 1);
  Epilogue e = with_ops({{OnednnPostOp::Swish, 1}});
  const EltwiseTail t = take_eltwise_tail(e);
  ::unsetenv("DISCO_ELTWISE_TAIL");
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(e.ops.size(), 1u);
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Each step against double precision on n values that are not a multiple of
// the vector, split between two threads, within a few float ulps; and the
// AVX2 pass on the same values where the CPU has AVX2.
TEST(EltwiseTail, MatchesDoublePrecisionOnEveryElementWithTwoThreads) {
  if (!vector_cpu()) GTEST_SKIP() << "no AVX-512 or AVX2 with FMA";
  struct Case {
    std::vector<PanelOp> ops;
    double (*ref)(double);
    double atol;  // 2 sigmoid(x) - 1 cancels near 0: an ulp of 1, not of the result
  };
  PanelOp sig, swish, gelu, lin;
  sig.kind = PanelOp::Sigmoid;
  swish.kind = PanelOp::Swish, swish.a = 1;
  gelu.kind = PanelOp::GeluErf;
  lin.kind = PanelOp::Linear, lin.a = 2, lin.b = -1;
  const std::vector<Case> cases = {
      {{sig}, [](double x) { return sigmoid(x); }, 0},
      {{swish}, [](double x) { return x * sigmoid(x); }, 0},
      {{gelu}, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, 0},  // erfc: no cancellation below 0
      {{sig, lin}, [](double x) { return 2 * sigmoid(x) - 1; }, 2.5e-7},
  };
  const int64_t n = 100003;
  for (size_t c = 0; c < cases.size(); ++c) {
    std::vector<float> data(n);
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(-30.0 + 60.0 * i / n);
    const std::vector<float> in = data;
    EltwiseTail t{cases[c].ops};
    run_eltwise_tail(t, data.data(), n, 2);
    // The AVX2 pass too, which run_eltwise_tail takes only without AVX-512.
    std::vector<float> avx2 = in;
    const bool has_avx2 = panel_gemm_avx2_cpu();
    if (has_avx2) panel_eltwise_avx2(avx2.data(), n, t.ops.data(), static_cast<int>(t.ops.size()));
    for (int64_t i = 0; i < n; ++i) {
      const double want = cases[c].ref(in[i]), tol = 1e-6 * std::fabs(want) + cases[c].atol + 1e-37;
      ASSERT_NEAR(data[i], want, tol) << "case " << c << " x = " << in[i];
      if (has_avx2) {
        ASSERT_NEAR(avx2[i], want, tol) << "AVX2, case " << c << " x = " << in[i];
      }
    }
  }
}

TEST(EltwiseTail, SpecialValues) {
  if (!vector_cpu()) GTEST_SKIP() << "no AVX-512 or AVX2 with FMA";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  PanelOp sig, swish;
  sig.kind = PanelOp::Sigmoid;
  swish.kind = PanelOp::Swish, swish.a = 1;
  std::vector<float> s = {nan, inf, -inf, -0.0f, 0.0f, -200.0f, 200.0f};
  std::vector<float> w = s;
  run_eltwise_tail(EltwiseTail{{sig}}, s.data(), static_cast<int64_t>(s.size()), 1);
  run_eltwise_tail(EltwiseTail{{swish}}, w.data(), static_cast<int64_t>(w.size()), 1);
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_EQ(s[1], 1.0f);
  EXPECT_EQ(s[2], 0.0f);
  EXPECT_EQ(s[3], 0.5f);
  EXPECT_EQ(s[5], 0.0f);
  EXPECT_EQ(s[6], 1.0f);
  EXPECT_TRUE(std::isnan(w[0]));
  EXPECT_EQ(w[1], inf);
  EXPECT_EQ(w[4], 0.0f);
  EXPECT_EQ(w[6], 200.0f);
  EXPECT_TRUE(std::isnan(w[2]) || w[2] == 0.0f);  // -inf * 0: PyTorch's SiLU gives NaN
}

// A conv step ending in SiLU or Sigmoid, at channel counts held blocked (32)
// and nhwc (24) and with a depthwise window, against a plain-loop convolution;
// the implementation names the tail, and without it (DISCO_ELTWISE_TAIL=0)
// oneDNN's own post-op gives the same numbers.
TEST(EltwiseTail, ConvStepsEndingInSiluOrSigmoidMatchThePlainConvolution) {
  struct Case {
    Dims xs, ws;
    int64_t group;
    std::string post;
  };
  const std::vector<Case> cases = {{{1, 16, 20, 21}, {32, 16, 1, 1}, 1, "swish:1"},
                                   {{2, 8, 9, 11}, {24, 8, 1, 1}, 1, "swish:1"},
                                   {{1, 32, 17, 15}, {32, 1, 3, 3}, 32, "swish:1"},
                                   {{1, 16, 7, 9}, {16, 16, 3, 3}, 1, "linear:2:0.5,sigmoid"}};
  for (const char *tail : {"1", "0"}) {
    ::setenv("DISCO_ELTWISE_TAIL", tail, 1);
    for (const Case &c : cases) {
      const int64_t pad = c.ws[2] / 2;
      const std::string p = std::to_string(pad);
      auto k = make_kernel("onednn.conv", {{"strides", "1,1"},
                                           {"dilations", "1,1"},
                                           {"pads", p + "," + p + "," + p + "," + p},
                                           {"group", std::to_string(c.group)},
                                           {"auto_pad", "NOTSET"},
                                           {"post_ops", c.post}});
      TensorData x = tensor(c.xs, 0.05f, 1), w = tensor(c.ws, 0.03f, 3), bias = tensor({c.ws[0]}, 0.5f, 5);
      Dims os;
      auto want = ref_conv2d(values(x), c.xs, values(w), c.ws, values(bias), {1, 1}, {1, 1}, {pad, pad, pad, pad},
                             c.group, &os);
      for (auto &v : want)
        v = c.post == "swish:1" ? static_cast<float>(v * sigmoid(v)) : static_cast<float>(sigmoid(2.0 * v + 0.5));
      TensorData y(DType::F32, os);
      std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
      SymbolValues syms;
      k->run(ExternCall{ins, outs, syms});
      const std::string what = std::string("DISCO_ELTWISE_TAIL=") + tail + ", W [" + std::to_string(c.ws[0]) + ", " +
                               std::to_string(c.ws[1]) + ", ...], " + c.post + ": " + k->implementation();
      expect_near_all(y, os, want, what);
      const bool named = k->implementation().find("eltwise tail") != std::string::npos;
      EXPECT_EQ(named, vector_cpu() && std::string(tail) == "1") << what;
    }
  }
  ::unsetenv("DISCO_ELTWISE_TAIL");
}

}  // namespace
}  // namespace disco
