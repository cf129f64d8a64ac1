// The oneDNN backend's MatMul and Gemm steps, and every epilogue fused into
// them, against scalar references written here, at several run-time shapes
// of one compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <thread>

#include "frontend/graph_builder.h"
#include "driver/session.h"
#include "targets/onednn/panel_gemm.h"
#include "tests/support/jit_eval.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

// ---- MatMul and Gemm ----------------------------------------------------------

TEST(OnednnMatMul, BatchBroadcastOfBothOperandsMatchesTheReference) {
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {sym("p"), 1, sym("m"), 4});
  auto w = b.input("b", DType::F32, {1, sym("q"), 4, 3});
  b.output(b.op("MatMul", {a, w}));
  Session s(b.build(), "mm_bcast", "", onednn_first());
  for (Dims sa : {Dims{2, 1, 3, 4}, Dims{1, 1, 5, 4}, Dims{3, 1, 1, 4}}) {
    const Dims sb{1, 2, 4, 3};
    TensorData ta = tensor(sa), tb = tensor(sb, 0.5f, 4);
    auto out = s.run({ta, tb});
    Dims os;
    auto want = ref_matmul(values(ta), sa, values(tb), sb, &os);
    expect_near_all(out[0], os, want, "A " + std::to_string(sa[0]) + "x" + std::to_string(sa[2]));
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).onednn, 1);
  EXPECT_EQ(s.compiles(), 1);
}

TEST(OnednnMatMul, ConstantWeightsWithBiasAndResidualServeManyShapesFromOneCompile) {
  // [batch, seq, 6] x [6, 5] + bias + residual, as in a transformer layer.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("batch"), sym("seq"), 6});
  auto res = b.input("res", DType::F32, {sym("batch"), sym("seq"), 5});
  TensorData w = tensor({6, 5}, 0.125f, 2), bias = tensor({5}, 0.5f, 1);
  auto y = b.op("MatMul", {x, b.constant("w", w)});
  y = b.op("Add", {b.constant("bias", bias), y});
  b.output(b.op("Add", {y, res}));
  const int before = compile_count();
  Session s(b.build(), "mm_bias_res", "", onednn_first());
  for (Dims shape : {Dims{1, 1}, Dims{2, 7}, Dims{3, 1}, Dims{4, 33}}) {
    const Dims sx{shape[0], shape[1], 6}, sr{shape[0], shape[1], 5};
    TensorData tx = tensor(sx), tr = tensor(sr, 0.75f, 5);
    auto out = s.run({tx, tr});
    Dims os;
    auto want = ref_matmul(values(tx), sx, values(w), {6, 5}, &os);
    const auto eb = expand(values(bias), {5}, os);
    for (size_t i = 0; i < want.size(); ++i) want[i] += eb[i] + tr.as<float>()[i];
    expect_near_all(out[0], os, want, "batch " + std::to_string(shape[0]) + " seq " + std::to_string(shape[1]));
  }
  const StepCount c = count_steps(s.last_compile().plan);
  EXPECT_EQ(c.onednn, 1);
  EXPECT_EQ(c.other, 0);
  EXPECT_EQ(compile_count(), before + 1);
}

TEST(OnednnGemm, TransposesAlphaBetaAndBiasMatchTheReference) {
  // Y = 0.5 * A^T B^T + 2 * C, A [4, m], B [3, 4], C [3].
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {4, sym("m")});
  TensorData w = tensor({3, 4}, 0.5f, 1), c = tensor({3}, 0.25f, 6);
  b.output(b.op("Gemm", {a, b.constant("b", w), b.constant("c", c)},
                testing::attrs({{"transA", attr_int(1)},
                                {"transB", attr_int(1)},
                                {"alpha", attr_float(0.5f)},
                                {"beta", attr_float(2.0f)}})));
  Session s(b.build(), "gemm_t", "", onednn_first());
  for (int64_t m : {1, 5, 16}) {
    TensorData ta = tensor({4, m});
    auto out = s.run({ta});
    std::vector<float> want(m * 3);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k) acc += double(ta.as<float>()[k * m + i]) * w.as<float>()[j * 4 + k];
        want[i * 3 + j] = static_cast<float>(0.5 * acc + 2.0 * c.as<float>()[j]);
      }
    expect_near_all(out[0], {m, 3}, want, "m = " + std::to_string(m));
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).onednn, 1);
}

TEST(OnednnGemm, ColumnBroadcastCAndAlphaWithoutCMatchTheReference) {
  // Y1 = A B + C with C [m, 1] an input; Y2 = 2 * A B with no C.
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {sym("m"), 4});
  auto c = b.input("c", DType::F32, {sym("m"), 1});
  TensorData w = tensor({4, 3}, 0.5f, 2);
  auto wc = b.constant("w", w);
  b.output(b.op("Gemm", {a, wc, c}));
  b.output(b.op("Gemm", {a, wc}, testing::attrs({{"alpha", attr_float(2.0f)}})));
  Session s(b.build(), "gemm_c", "", onednn_first());
  for (int64_t m : {1, 6}) {
    TensorData ta = tensor({m, 4}), tc = tensor({m, 1}, 1.0f, 3);
    auto out = s.run({ta, tc});
    Dims os;
    auto ab = ref_matmul(values(ta), {m, 4}, values(w), {4, 3}, &os);
    std::vector<float> y1(ab.size()), y2(ab.size());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        y1[i * 3 + j] = ab[i * 3 + j] + tc.as<float>()[i];
        y2[i * 3 + j] = 2 * ab[i * 3 + j];
      }
    expect_near_all(out[0], os, y1, "A B + C");
    expect_near_all(out[1], os, y2, "2 A B");
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).onednn, 2);
}

// ---- epilogues ----------------------------------------------------------------

// y = x [m, 6] x W [6, 5], then one epilogue; every node must land in one onednn step.
struct EpilogueCase {
  std::string name;
  // Builds the epilogue on `y`; may add the input "r" [m, 5] or "s" [m, 1].
  std::function<std::string(GraphBuilder &, const std::string &y)> build;
  // The reference, per element: y, row i, column j, and the inputs r and s.
  std::function<double(double y, int64_t i, int64_t j, const TensorData &r, const TensorData &s)> ref;
  bool uses_r = false, uses_s = false;
};

std::string scalar(GraphBuilder &b, float v) {
  static int count = 0;
  return b.constant("k" + std::to_string(count++), testing::f32({}, {v}));
}

std::vector<EpilogueCase> epilogue_cases() {
  const TensorData bias = tensor({5}, 0.5f, 1);
  const TensorData bn_scale = tensor({5}, 0.25f, 2), bn_b = tensor({5}, 0.5f, 3), bn_mean = tensor({5}, 0.5f, 4);
  const TensorData bn_var = testing::f32({5}, {0.5f, 1.0f, 2.0f, 0.25f, 4.0f});
  auto bn_ref = [=](double y, int64_t j) {
    return (y - bn_mean.as<float>()[j]) / std::sqrt(bn_var.as<float>()[j] + 1e-3) * bn_scale.as<float>()[j] +
           bn_b.as<float>()[j];
  };
  return {
      {"ConstantBias",
       [=](GraphBuilder &b, const std::string &y) {
         return b.op("Add", {y, b.constant("bias", bias)});
       },
       [=](double y, int64_t, int64_t j, const TensorData &, const TensorData &) { return y + bias.as<float>()[j]; }},
      {"Residual",
       [](GraphBuilder &b, const std::string &y) {
         return b.op("Add", {"r", y});
       },
       [](double y, int64_t i, int64_t j, const TensorData &r, const TensorData &) {
         return y + r.as<float>()[i * 5 + j];
       },
       true},
      {"RowScaleAndSubtract",
       [](GraphBuilder &b, const std::string &y) {
         return b.op("Sub", {b.op("Mul", {"s", y}), "s"});
       },
       [](double y, int64_t i, int64_t, const TensorData &, const TensorData &s) {
         return y * s.as<float>()[i] - s.as<float>()[i];
       },
       false, true},
      {"DivideByRows",
       [](GraphBuilder &b, const std::string &y) {
         return b.op("Div", {y, "s"});
       },
       [](double y, int64_t i, int64_t, const TensorData &, const TensorData &s) { return y / s.as<float>()[i]; },
       false, true},
      {"Relu", [](GraphBuilder &b, const std::string &y) { return b.op("Relu", {y}); },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) { return y > 0 ? y : 0; }},
      {"LeakyRelu",
       [](GraphBuilder &b, const std::string &y) {
         return b.op("LeakyRelu", {y}, testing::attrs({{"alpha", attr_float(0.125f)}}));
       },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) { return y > 0 ? y : 0.125 * y; }},
      {"Sigmoid", [](GraphBuilder &b, const std::string &y) { return b.op("Sigmoid", {y}); },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) { return 1 / (1 + std::exp(-y)); }},
      {"Tanh", [](GraphBuilder &b, const std::string &y) { return b.op("Tanh", {y}); },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) { return std::tanh(y); }},
      {"Clip",
       [](GraphBuilder &b, const std::string &y) {
         return b.op("Clip", {y, scalar(b, -0.5f), scalar(b, 1.0f)});
       },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) {
         return std::min(std::max(y, -0.5), 1.0);
       }},
      {"GeluAsPyTorchExportsIt",
       [](GraphBuilder &b, const std::string &y) {
         auto e = b.op("Erf", {b.op("Div", {y, scalar(b, 1.4142135f)})});
         auto f = b.op("Add", {e, scalar(b, 1.0f)});
         return b.op("Mul", {b.op("Mul", {y, f}), scalar(b, 0.5f)});
       },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) { return gelu(y); }},
      {"GeluHalvedFirst",
       [](GraphBuilder &b, const std::string &y) {
         auto h = b.op("Mul", {scalar(b, 0.5f), y});
         auto e = b.op("Erf", {b.op("Mul", {y, scalar(b, 0.70710678f)})});
         return b.op("Mul", {b.op("Add", {scalar(b, 1.0f), e}), h});
       },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) { return gelu(y); }},
      {"ScalarArithmetic",
       [](GraphBuilder &b, const std::string &y) {
         auto v = b.op("Div", {b.op("Mul", {scalar(b, 2.0f), b.op("Sub", {y, scalar(b, 1.5f)})}), scalar(b, 4.0f)});
         return b.op("Sub", {scalar(b, 3.0f), b.op("Add", {v, scalar(b, 0.25f)})});
       },
       [](double y, int64_t, int64_t, const TensorData &, const TensorData &) {
         return 3.0 - ((2.0 * (y - 1.5)) / 4.0 + 0.25);
       }},
      {"BatchNormalization",
       [=](GraphBuilder &b, const std::string &y) {
         return b.op("BatchNormalization",
                     {y, b.constant("bn_s", bn_scale), b.constant("bn_b", bn_b), b.constant("bn_m", bn_mean),
                      b.constant("bn_v", bn_var)},
                     testing::attrs({{"epsilon", attr_float(1e-3f)}}));
       },
       [=](double y, int64_t, int64_t j, const TensorData &, const TensorData &) { return bn_ref(y, j); }},
      {"BiasGeluResidualChain",
       [=](GraphBuilder &b, const std::string &y) {
         auto v = b.op("Add", {y, b.constant("bias", bias)});
         auto e = b.op("Erf", {b.op("Div", {v, scalar(b, 1.4142135f)})});
         auto g = b.op("Mul", {b.op("Mul", {v, b.op("Add", {e, scalar(b, 1.0f)})}), scalar(b, 0.5f)});
         return b.op("Relu", {b.op("Add", {g, "r"})});
       },
       [=](double y, int64_t i, int64_t j, const TensorData &r, const TensorData &) {
         return std::max(0.0, gelu(y + bias.as<float>()[j]) + r.as<float>()[i * 5 + j]);
       },
       true},
  };
}

class OnednnEpilogue : public ::testing::TestWithParam<EpilogueCase> {};

TEST_P(OnednnEpilogue, FusesIntoTheMatMulStepAndMatchesTheReference) {
  const EpilogueCase &ec = GetParam();
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 6});
  if (ec.uses_r) b.input("r", DType::F32, {sym("m"), 5});
  if (ec.uses_s) b.input("s", DType::F32, {sym("m"), 1});
  TensorData w = tensor({6, 5}, 0.25f, 3);
  b.output(ec.build(b, b.op("MatMul", {x, b.constant("w", w)})));
  Session s(b.build(), "epilogue", "", onednn_first());
  const StepCount c = count_steps(s.last_compile().plan);
  EXPECT_EQ(c.onednn, 1);
  EXPECT_EQ(c.other, 0) << "every epilogue node belongs to the oneDNN step";
  for (int64_t m : {1, 4, 9}) {
    TensorData tx = tensor({m, 6}), tr = tensor({m, 5}, 0.5f, 7);
    TensorData ts = testing::f32({m, 1}, std::vector<float>(m));
    for (int64_t i = 0; i < m; ++i) ts.mutable_as<float>()[i] = 0.5f + 0.25f * static_cast<float>(i);
    std::vector<TensorData> in{tx};
    if (ec.uses_r) in.push_back(tr);
    if (ec.uses_s) in.push_back(ts);
    auto out = s.run(in);
    Dims os;
    auto y = ref_matmul(values(tx), {m, 6}, values(w), {6, 5}, &os);
    std::vector<float> want(y.size());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < 5; ++j) want[i * 5 + j] = static_cast<float>(ec.ref(y[i * 5 + j], i, j, tr, ts));
    expect_near_all(out[0], os, want, ec.name + " at m = " + std::to_string(m));
  }
}

INSTANTIATE_TEST_SUITE_P(Epilogues, OnednnEpilogue, ::testing::ValuesIn(epilogue_cases()),
                         [](const ::testing::TestParamInfo<EpilogueCase> &i) { return i.param.name; });

// GELU (as PyTorch exports it, and opset 20's Gelu node in both forms), Tanh
// and Sigmoid after a MatMul by constant weights, on 16 and 40 rows whose products reach +-8: the host's Halide
// kernel (lowering/math_library.h) and the oneDNN step (the panel product
// with panel_math.h's GELU on AVX-512 CPUs, oneDNN's post-ops elsewhere)
// agree with a double-precision reference, and so with each other, to within
// the float rounding of the product and a few ulp of the function.
TEST(OnednnMatMul, TranscendentalEpiloguesGiveTheHostKernelsNumbers) {
  const int64_t k = 64, n = 96;
  const TensorData w = random_f32({k, n}, 11, 0.25f);
  struct Case {
    const char *name;
    std::function<std::string(GraphBuilder &, const std::string &)> build;
    double (*ref)(double);
    bool fused = true;  // into the oneDNN step (GELU's tanh form is not)
  };
  const Case cases[] = {
      {"gelu",
       [](GraphBuilder &b, const std::string &y) {
         auto e = b.op("Erf", {b.op("Div", {y, scalar(b, 1.4142135f)})});
         return b.op("Mul", {b.op("Mul", {y, b.op("Add", {e, scalar(b, 1.0f)})}), scalar(b, 0.5f)});
       },
       gelu},
      {"tanh", [](GraphBuilder &b, const std::string &y) { return b.op("Tanh", {y}); },
       [](double y) { return std::tanh(y); }},
      {"sigmoid", [](GraphBuilder &b, const std::string &y) { return b.op("Sigmoid", {y}); },
       [](double y) { return 1 / (1 + std::exp(-y)); }},
      {"gelu_node", [](GraphBuilder &b, const std::string &y) { return b.op("Gelu", {y}); }, gelu},
      {"gelu_tanh_node",
       [](GraphBuilder &b, const std::string &y) {
         return b.op("Gelu", {y}, testing::attrs({{"approximate", attr_string("tanh")}}));
       },
       [](double y) { return y / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (y + 0.044715 * y * y * y))); }, false},
  };
  CompileOptions host_only;
  host_only.backends = {"host"};
  host_only.use_cache = false;
  for (const Case &c : cases) {
    GraphBuilder b(20);  // opset 20 has Gelu
    auto x = b.input("x", DType::F32, {sym("m"), k});
    b.output(c.build(b, b.op("MatMul", {x, b.constant("w", w)})));
    const Graph g = b.build();
    Session on_host(g, std::string(c.name) + "_host", "", host_only);
    Session on_onednn(g, std::string(c.name) + "_onednn", "", onednn_first());
    on_host.set_num_threads(1);
    on_onednn.set_num_threads(1);  // the panel product takes small weights on one thread
    EXPECT_EQ(count_steps(on_onednn.last_compile().plan).other == 0, c.fused) << c.name << " runs in the oneDNN step";
    EXPECT_EQ(count_steps(on_host.last_compile().plan).onednn, 0) << c.name;
    for (int64_t m : {16, 40}) {
      const TensorData tx = random_f32({m, k}, 5 + static_cast<uint32_t>(m), 3.0f);
      const auto from_host = on_host.run({tx}), from_onednn = on_onednn.run({tx});
      double worst = 0, reach = 0;  // worst error over its tolerance; the largest |product|
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double y = 0, magnitude = 0;
          for (int64_t kk = 0; kk < k; ++kk) {
            const double p = double(tx.as<float>()[i * k + kk]) * w.as<float>()[kk * n + j];
            y += p, magnitude += std::fabs(p);
          }
          const double want = c.ref(y);
          // The product's rounding, through a slope of at most 1.13, and 8 ulp of the result.
          const double tol = 1.2 * k * 0x1p-24 * magnitude + 8 * 0x1p-24 * std::fabs(want);
          const float h = from_host[0].as<float>()[i * n + j], o = from_onednn[0].as<float>()[i * n + j];
          worst = std::max({worst, std::fabs(h - want) / tol, std::fabs(o - want) / tol});
          reach = std::max(reach, std::fabs(y));
        }
      EXPECT_LE(worst, 1.0) << c.name << " at m = " << m;
      EXPECT_GT(reach, 6.0) << "the products reach far into the function's tails";
    }
  }
}


// ---- the AVX2 panel product (panel_gemm_avx2) ------------------------------------

// GELU through erfc, exact in the far negative tail too (1 + erf cancels there).
double exact_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

// B [k, n] as panel_gemm_avx2 reads it: panels of [k, 16], zero past n, at
// a 64-byte boundary (its loads of B are aligned ones).
struct Avx2Panels {
  std::vector<float> storage;
  float *data = nullptr;
};
Avx2Panels avx2_panels(const std::vector<float> &b, int64_t k, int64_t n) {
  const int64_t panels = (n + kPanelColumnsAvx2 - 1) / kPanelColumnsAvx2;
  Avx2Panels p;
  p.storage.assign(static_cast<size_t>(panels * k * kPanelColumnsAvx2 + 16), 0.0f);
  p.data = p.storage.data() + (16 - reinterpret_cast<uintptr_t>(p.storage.data()) / 4 % 16) % 16;
  for (int64_t q = 0; q < panels; ++q)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < kPanelColumnsAvx2 && q * kPanelColumnsAvx2 + j < n; ++j)
        p.data[(q * k + kk) * kPanelColumnsAvx2 + j] = b[kk * n + q * kPanelColumnsAvx2 + j];
  return p;
}

// An epilogue for the kernel test: its steps, and the reference of each
// element from the exact product y (double) at row i, column j.
struct Avx2Epilogue {
  std::string name;
  std::vector<PanelOp> ops;  // operands set per shape
  // 0: none; 1: full [rows, n]; 2: bias [1, n]; 3: per row [rows, 1]; one entry per op
  std::vector<int> operand_kind;
  double slope;  // the largest |d result / d y|, for the tolerance
};

// Every case of rows (6-row tiles and each remainder; more rows than a
// block of rows), K (one value; K blocks even and not; K blocks forced
// small through k_block) and n (whole panels; a last panel of 1 to 15
// columns), with each epilogue step, on one thread, on two sharing the panels
// and on a split of the panels into two calls, against a double reference.
TEST(OnednnPanelAvx2, KernelMatchesADoubleReferenceOverTilesKBlocksAndRemainders) {
  if (!panel_gemm_avx2_cpu()) GTEST_SKIP() << "the AVX2 panel product needs AVX2 and FMA";
  struct Shape {
    int64_t rows, k, n, k_block;
  };
  const Shape shapes[] = {{1, 1, 16, 0},  {5, 7, 37, 0},     {13, 769, 40, 0},
                          {197, 300, 100, 64}, {200, 50, 33, 16}, {6, 1537, 17, 0}};
  std::vector<Avx2Epilogue> epilogues;
  auto op = [](PanelOp::Kind kind, float a = 0, float b = 0) {
    PanelOp p;
    p.kind = kind, p.a = a, p.b = b;
    return p;
  };
  epilogues.push_back({"none", {}, {}, 1});
  epilogues.push_back({"add full", {op(PanelOp::Add)}, {1}, 1});
  epilogues.push_back({"add bias", {op(PanelOp::Add)}, {2}, 1});
  epilogues.push_back({"mul per row", {op(PanelOp::Mul)}, {3}, 2});
  epilogues.push_back({"relu", {op(PanelOp::Relu, 0)}, {0}, 1});
  epilogues.push_back({"leaky relu", {op(PanelOp::Relu, 0.125f)}, {0}, 1});
  epilogues.push_back({"gelu", {op(PanelOp::GeluErf)}, {0}, 1.13});
  epilogues.push_back({"linear", {op(PanelOp::Linear, -1.5f, 0.25f)}, {0}, 1.5});
  epilogues.push_back({"sigmoid", {op(PanelOp::Sigmoid)}, {0}, 0.25});
  epilogues.push_back({"bias swish", {op(PanelOp::Add), op(PanelOp::Swish, 1.0f)}, {2, 0}, 1.1});
  epilogues.push_back({"swish 1.5", {op(PanelOp::Swish, 1.5f)}, {0}, 1.2});
  epilogues.push_back({"hardswish", {op(PanelOp::HardSwish)}, {0}, 1.5});
  epilogues.push_back({"bias gelu residual",
                       {op(PanelOp::Add), op(PanelOp::GeluErf), op(PanelOp::Add)},
                       {2, 0, 1},
                       1.13});
  uint32_t seed = 1;
  for (const Shape &sh : shapes) {
    const TensorData a = random_f32({sh.rows, sh.k}, seed++, 1.0f), b = random_f32({sh.k, sh.n}, seed++, 1.0f);
    const Avx2Panels panels = avx2_panels(values(b), sh.k, sh.n);
    // Operands of each kind, distinct per step.
    const TensorData full = random_f32({sh.rows, sh.n}, seed++, 2.0f), bias = random_f32({sh.n}, seed++, 2.0f),
                     per_row = random_f32({sh.rows}, seed++, 2.0f);
    // The exact product, and the sum of its terms' magnitudes (for the tolerance).
    std::vector<double> y(sh.rows * sh.n, 0.0), mag(sh.rows * sh.n, 0.0);
    for (int64_t i = 0; i < sh.rows; ++i)
      for (int64_t kk = 0; kk < sh.k; ++kk)
        for (int64_t j = 0; j < sh.n; ++j) {
          const double t = double(a.as<float>()[i * sh.k + kk]) * b.as<float>()[kk * sh.n + j];
          y[i * sh.n + j] += t, mag[i * sh.n + j] += std::fabs(t);
        }
    for (const Avx2Epilogue &ep : epilogues) {
      std::vector<PanelOp> ops = ep.ops;
      for (size_t s = 0; s < ops.size(); ++s) {
        PanelOp &p = ops[s];
        if (ep.operand_kind[s] == 1) p.operand = full.as<float>(), p.row_stride = sh.n, p.col_stride = 1;
        if (ep.operand_kind[s] == 2) p.operand = bias.as<float>(), p.row_stride = 0, p.col_stride = 1;
        if (ep.operand_kind[s] == 3) p.operand = per_row.as<float>(), p.row_stride = 1, p.col_stride = 0;
      }
      std::vector<double> want(y.size());
      for (int64_t i = 0; i < sh.rows; ++i)
        for (int64_t j = 0; j < sh.n; ++j) {
          double v = y[i * sh.n + j];
          for (const PanelOp &p : ops) {
            const double operand = p.operand ? p.operand[i * p.row_stride + j * p.col_stride] : 0;
            if (p.kind == PanelOp::Add) v += operand;
            if (p.kind == PanelOp::Mul) v *= operand;
            if (p.kind == PanelOp::Relu && v < 0) v *= p.a;
            if (p.kind == PanelOp::GeluErf) v = exact_gelu(v);
            if (p.kind == PanelOp::Linear) v = p.a * v + p.b;
            if (p.kind == PanelOp::Sigmoid) v = 1 / (1 + std::exp(-v));
            if (p.kind == PanelOp::Swish) v = v / (1 + std::exp(-double(p.a) * v));
            if (p.kind == PanelOp::HardSwish) v = v * std::min(std::max(v / 6 + 0.5, 0.0), 1.0);
          }
          want[i * sh.n + j] = v;
        }
      for (const char *how : {"one thread", "two threads", "two calls"}) {
        // y starts as NaN: every element must be written, and none read before.
        std::vector<float> out(sh.rows * sh.n + 1, std::nanf(""));
        PanelGemm g;
        g.a = a.as<float>(), g.panels = panels.data, g.y = out.data();
        g.rows = sh.rows, g.k = g.lda = sh.k, g.n = g.ldy = sh.n, g.k_block = sh.k_block;
        g.ops = ops.data(), g.num_ops = static_cast<int>(ops.size());
        const int64_t count = (sh.n + kPanelColumnsAvx2 - 1) / kPanelColumnsAvx2;
        if (std::string(how) == "one thread") {
          panel_gemm_avx2(g, 0, count);
        } else if (std::string(how) == "two calls") {
          panel_gemm_avx2(g, count / 2, count);
          panel_gemm_avx2(g, 0, count / 2);
        } else {
          int64_t claimed = 0;
          std::thread other([&] { panel_gemm_shared_avx2(g, 0, count, false, &claimed); });
          panel_gemm_shared_avx2(g, 0, count, true, &claimed);
          other.join();
        }
        const std::string what = ep.name + ", " + std::to_string(sh.rows) + " x [" + std::to_string(sh.k) + ", " +
                                 std::to_string(sh.n) + "] K block " + std::to_string(sh.k_block) + ", " + how;
        double worst = 0;
        for (int64_t i = 0; i < sh.rows * sh.n; ++i) {
          // The float product's rounding through the epilogue's slope, the
          // operands' roundings, and a few ulp of the result (GELU's 6).
          const double tol = ep.slope * 1.01 * (sh.k + 2) * 0x1p-24 * (mag[i] + 8.0) + 16 * 0x1p-24 * std::fabs(want[i]) + 1e-30;
          ASSERT_FALSE(std::isnan(out[i])) << what << " element " << i;
          worst = std::max(worst, std::fabs(out[i] - want[i]) / tol);
        }
        EXPECT_LE(worst, 1.0) << what;
        EXPECT_TRUE(std::isnan(out.back())) << what << ": wrote past y";
      }
    }
  }
}

// The GELU epilogue alone (K = 1, B = 1, so y is x exactly) over [-16, 16]:
// AVX2 has no scalef, so its scale by 2^k is built in two halves, which
// must round a subnormal e^(-x^2/2) once, as scalef does. Within 6 ulp of
// the exact GELU (math::gelu_erf's bound) from -13 up, as panel_math_test
// checks its scalar form; below -13 Phi's product t e^(-x^2/2) / 2 is
// subnormal in every form of panel_math.h (the scalar one too gives 11 ulp
// at x = -13.098), so there the bound is 16 of the smallest subnormal.
TEST(OnednnPanelAvx2, GeluEpilogueIsWithinMathLibrarysBoundOfTheExactGelu) {
  if (!panel_gemm_avx2_cpu()) GTEST_SKIP() << "the AVX2 panel product needs AVX2 and FMA";
  const int64_t rows = 1 << 16;
  std::vector<float> x(rows), out(rows);
  const Avx2Panels one = avx2_panels({1.0f}, 1, 1);
  for (int64_t i = 0; i < rows; ++i) x[i] = -16.0f + 32.0f * static_cast<float>(i) / rows;
  PanelOp gelu_op;
  gelu_op.kind = PanelOp::GeluErf;
  PanelGemm g;
  g.a = x.data(), g.panels = one.data, g.y = out.data(), g.rows = rows, g.k = g.lda = 1, g.n = g.ldy = 1;
  g.ops = &gelu_op, g.num_ops = 1;
  panel_gemm_avx2(g, 0, 1);
  double worst = 0;
  float worst_x = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const double want = exact_gelu(x[i]);
    int e;
    std::frexp(want, &e);
    const double unit = x[i] >= -13 ? 6 * std::ldexp(1.0, e - 24) : 16 * 0x1p-149;
    const double u = std::fabs(out[i] - want) / unit;
    if (u > worst) worst = u, worst_x = x[i];
  }
  EXPECT_LE(worst, 1.0) << "at x = " << worst_x;
}

// The matmul step on an AVX2 CPU without AVX-512: constant weights of 1 MiB
// or more with n a multiple of 16, 65 to 448 rows, each epilogue step the
// step maps, on one and two threads: panel_gemm avx2 runs it (so named in
// implementation(), which DISCO_ONEDNN_VERBOSE prints) and matches a double
// reference, also with the residual in the output buffer and K over one
// block (1100: the partial sums must not pass through y there); so does 9 to
// 64 rows with n a multiple of 512 (034aa3b). Outside those shapes (64 rows
// at n = 768, 449 rows, n = 500, weights under 1 MiB) oneDNN keeps it.
TEST(OnednnPanelAvx2, TheMatmulStepRunsItWithItsEpilogueOnOneAndTwoThreads) {
  if (panel_gemm_cpu() || !panel_gemm_avx2_cpu()) GTEST_SKIP() << "for AVX2 CPUs without AVX-512";
  struct Case {
    std::string post_ops;
    int second;  // 0: none; 1: [m, n]; 2: [m, 1]; 3: the output buffer itself, holding a residual
  };
  struct Run {
    int threads;
    int64_t m, kk, n;
    bool panel;
  };
  const std::vector<Run> runs = {{1, 77, 1100, 512, true},  {1, 197, 1100, 1024, true}, {2, 65, 1100, 512, true},
                                 {2, 448, 1100, 512, true}, {1, 100, 512, 512, true},   {1, 64, 1100, 512, true}, {1, 64, 1100, 768, false},
                                 {2, 449, 1100, 512, false}, {1, 154, 1100, 500, false}, {1, 100, 511, 512, false},
                                 {1, 130, 1100, 768, true},
                                 // A classifier head at a small batch: 2 to 8 rows, any n, weights of 1 MiB on.
                                 {1, 2, 1100, 1000, true},  {2, 8, 1100, 300, true},   {1, 1, 1100, 512, false},
                                 {1, 4, 200, 512, false}};
  for (const Case &c : {Case{"add,gelu_erf", 0}, Case{"add,add", 1}, Case{"relu:0.1,linear:0.5:0.25,mul,add", 2},
                        Case{"add", 3}, Case{"add,swish:1", 0}, Case{"add,hardswish", 0}, Case{"add,sigmoid", 0}}) {
    for (const Run &run : runs) {
      const int64_t m = run.m, kk = run.kk, n = run.n;
      TensorData w = random_f32({kk, n}, 3, 0.05f), bias = random_f32({n}, 4, 0.5f);
      auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", c.post_ops}});
      k->set_num_threads(run.threads);
      TensorData a = random_f32({m, kk}, 5, 0.5f), y = random_f32({m, n}, 6, 0.75f);
      TensorData second = random_f32({m, c.second == 2 ? 1 : n}, 7, 0.75f);
      const std::vector<float> y0 = values(y);
      std::vector<ExternTensor> ins{view(a), view(w, true)};
      if (c.post_ops.rfind("add", 0) == 0 && c.second != 3) ins.push_back(view(bias));
      if (c.second == 1 || c.second == 2) ins.push_back(view(second));
      if (c.second == 3) ins.push_back(view(y));
      if (c.post_ops.rfind("relu", 0) == 0) ins.push_back(view(bias));
      std::vector<ExternTensor> outs{view(y)};
      SymbolValues syms;
      k->run(ExternCall{ins, outs, syms});
      double worst = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double v = 0, mag = 0;
          for (int64_t q = 0; q < kk; ++q) {
            const double t = double(a.as<float>()[i * kk + q]) * w.as<float>()[q * n + j];
            v += t, mag += std::fabs(t);
          }
          const double b = bias.as<float>()[j];
          const double s = c.second == 2 ? second.as<float>()[i] : c.second == 1 ? second.as<float>()[i * n + j] : 0;
          if (c.post_ops == "add,gelu_erf") v = exact_gelu(v + b);
          if (c.post_ops == "add,add") v = v + b + s;
          if (c.post_ops == "relu:0.1,linear:0.5:0.25,mul,add") v = ((v < 0 ? 0.1 * v : v) * 0.5 + 0.25) * s + b;
          if (c.post_ops == "add") v += y0[i * n + j];
          if (c.post_ops == "add,swish:1") v = (v + b) / (1 + std::exp(-(v + b)));
          if (c.post_ops == "add,hardswish") v = (v + b) * std::min(std::max((v + b) / 6 + 0.5, 0.0), 1.0);
          if (c.post_ops == "add,sigmoid") v = 1 / (1 + std::exp(-(v + b)));
          const double tol = 1.2 * kk * 0x1p-24 * (mag + 4) + 16 * 0x1p-24 * std::fabs(v);
          worst = std::max(worst, std::fabs(y.as<float>()[i * n + j] - v) / tol);
        }
      const std::string what = c.post_ops + (c.second == 3 ? " in place" : "") + " m = " + std::to_string(m) +
                               " n = " + std::to_string(n) + " on " + std::to_string(run.threads);
      EXPECT_LE(worst, 1.0) << what;
      EXPECT_EQ(k->implementation() == "panel_gemm avx2", run.panel) << what << ": " << k->implementation();
    }
  }
}

}  // namespace
}  // namespace disco
