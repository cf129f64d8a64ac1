// The oneDNN backend (targets/onednn/): which nodes its rules take, and its
// MatMul, Gemm and Conv steps with every fused epilogue against scalar
// references written here, at several run-time shapes of one compile; the
// glue's shape cache bound, its run-time shape errors and empty reductions.
#include "targets/onednn/onednn_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <tuple>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "runtime/extern_kernel.h"
#include "driver/compile_model.h"
#include "targets/onednn/onednn_kernels.h"
#include "targets/onednn/panel_gemm.h"
#include "targets/partitioner.h"
#include "driver/session.h"
#include "tests/support/partitioned.h"
#include "tests/support/jit_eval.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::count_steps;
using testing::StepCount;
using testing::numel;
using testing::onednn_first;
using testing::tensor;
using testing::values;
using testing::ramp;
using testing::sym;
using Dims = std::vector<int64_t>;

// ---- helpers ----------------------------------------------------------------

// Row-major `v` of `shape`, broadcast (numpy rules) to `out`.
std::vector<float> expand(const std::vector<float> &v, Dims shape, const Dims &out) {
  shape.insert(shape.begin(), out.size() - shape.size(), 1);
  std::vector<float> r(numel(out));
  for (int64_t i = 0; i < numel(out); ++i) {
    int64_t rest = i, off = 0, stride = 1;
    for (size_t d = out.size(); d-- > 0;) {
      const int64_t idx = rest % out[d];
      rest /= out[d];
      off += (shape[d] == 1 ? 0 : idx) * stride;
      stride *= shape[d];
    }
    r[i] = v[off];
  }
  return r;
}

// ONNX MatMul (ranks >= 2, batch dims broadcast) in plain loops.
std::vector<float> ref_matmul(const std::vector<float> &a, Dims sa, const std::vector<float> &b, Dims sb, Dims *out) {
  const size_t r = std::max(sa.size(), sb.size());
  sa.insert(sa.begin(), r - sa.size(), 1);
  sb.insert(sb.begin(), r - sb.size(), 1);
  const int64_t m = sa[r - 2], k = sa[r - 1], n = sb[r - 1];
  Dims batch;
  for (size_t d = 0; d + 2 < r; ++d) batch.push_back(std::max(sa[d], sb[d]));
  Dims oa = batch, ob = batch;
  oa.insert(oa.end(), {m, k});
  ob.insert(ob.end(), {k, n});
  const auto ea = expand(a, sa, oa), eb = expand(b, sb, ob);
  *out = batch;
  out->insert(out->end(), {m, n});
  std::vector<float> y(numel(*out), 0.0f);
  for (int64_t p = 0; p < numel(batch); ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += double(ea[(p * m + i) * k + q]) * eb[(p * k + q) * n + j];
        y[(p * m + i) * n + j] = static_cast<float>(s);
      }
  return y;
}

// ONNX Conv, 2-D, explicit pads {top, left, bottom, right}.
std::vector<float> ref_conv2d(const std::vector<float> &x, const Dims &xs, const std::vector<float> &w, const Dims &ws,
                              const std::vector<float> &bias, Dims strides, Dims dil, Dims pads, int64_t group,
                              Dims *out) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], m = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  const int64_t oh = (h + pads[0] + pads[2] - (dil[0] * (kh - 1) + 1)) / strides[0] + 1;
  const int64_t ow = (wd + pads[1] + pads[3] - (dil[1] * (kw - 1) + 1)) / strides[1] + 1;
  *out = {n, m, oh, ow};
  std::vector<float> y(numel(*out));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = bias.empty() ? 0.0 : bias[o];
          const int64_t g = o / (m / group);
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t yy = i * strides[0] + p * dil[0] - pads[0], xx = j * strides[1] + q * dil[1] - pads[1];
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                s += double(x[((b * c + g * cg + ci) * h + yy) * wd + xx]) * w[((o * cg + ci) * kh + p) * kw + q];
              }
          y[((b * m + o) * oh + i) * ow + j] = static_cast<float>(s);
        }
  (void)c;
  return y;
}

void expect_near_all(const TensorData &got, const Dims &shape, const std::vector<float> &want, const std::string &what,
                     double rtol = 1e-4, double atol = 1e-5) {
  ASSERT_EQ(got.shape, shape) << what;
  ASSERT_EQ(static_cast<size_t>(got.num_elements()), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.as<float>()[i], want[i], atol + rtol * std::fabs(want[i])) << what << " element " << i;
}

// A kernel of the glue, made as the executor makes it.
std::unique_ptr<OnednnKernel> make_kernel(const std::string &call, std::map<std::string, std::string> params) {
  install_onednn_runtime();
  PlanStep step;
  step.extern_call = call;
  step.label = "test_step";
  step.params = std::move(params);
  const ExternKernelFactory *make = ExternKernelRegistry::global().find(call);
  EXPECT_TRUE(make) << call;
  std::unique_ptr<ExternKernel> k = (*make)(step);
  auto *o = dynamic_cast<OnednnKernel *>(k.get());
  EXPECT_TRUE(o);
  k.release();
  return std::unique_ptr<OnednnKernel>(o);
}

ExternTensor view(TensorData &t, bool constant = false) { return {t.mutable_data(), t.dtype, t.shape, constant}; }

// ---- rules -----------------------------------------------------------------

using testing::Partitioned;

Partitioned partition_onednn(Graph g) { return testing::partition_for(std::move(g), {"onednn", "host"}); }

TEST(OnednnRules, IntegerAndOneDimensionalMatMulsGoToTheHostWithAReason) {
  GraphBuilder b;
  auto xi = b.input("xi", DType::I32, {sym("m"), 4});
  auto wi = b.constant("wi", testing::i32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.output(b.op("MatMul", {xi, wi}));
  auto v = b.input("v", DType::F32, {4});
  auto w = b.constant("w", tensor({4, 3}));
  b.output(b.op("MatMul", {v, w}));
  Partitioned p = partition_onednn(b.build());
  for (const auto &r : p.partition.regions) EXPECT_EQ(r.backend, "host");
  const std::string text = describe_partition(p.graph, p.partition);
  EXPECT_NE(text.find("only float32 is supported; 'xi' is int32"), std::string::npos) << text;
  EXPECT_NE(text.find("1-D operands"), std::string::npos) << text;
}

TEST(OnednnRules, TwoConvolutionsMeetingAtAnAddBothRunOnOnednn) {
  // A residual block's join: one unit takes the Add, the other ends before it.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 2, sym("h"), sym("w")});
  auto c1 = b.op("Conv", {x, b.constant("w1", tensor({2, 2, 1, 1}))});
  auto c2 = b.op("Conv", {x, b.constant("w2", tensor({2, 2, 1, 1}, 0.5f, 3))});
  b.output(b.op("Relu", {b.op("Add", {c1, c2})}));
  Partitioned p = partition_onednn(b.build());
  ASSERT_EQ(p.partition.regions.size(), 1u) << describe_partition(p.graph, p.partition);
  EXPECT_EQ(p.partition.regions[0].backend, "onednn");
  EXPECT_EQ(p.partition.regions[0].units.size(), 2u);
}

TEST(OnednnRules, AnEpilogueStopsAtAValueWithTwoReaders) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 4});
  auto y = b.op("MatMul", {x, b.constant("w", tensor({4, 3}))});
  auto r = b.op("Relu", {y});
  b.output(b.op("Add", {r, r}));   // r has one reader but is both operands
  b.output(b.op("Sigmoid", {y}));  // y has two readers
  Partitioned p = partition_onednn(b.build());
  EXPECT_EQ(p.backend_of("MatMul"), "onednn");
  EXPECT_EQ(p.backend_of("Relu"), "host");
  EXPECT_EQ(p.backend_of("Sigmoid"), "host");
}

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

double gelu(double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }

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

// ---- Conv ---------------------------------------------------------------------

TEST(OnednnConv, StridesPadsDilationsGroupsAndBiasMatchTheReference) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
  TensorData w = tensor({6, 2, 3, 2}, 0.25f, 1), bias = tensor({6}, 0.5f, 2);
  auto y = b.op("Conv", {x, b.constant("w", w), b.constant("bias", bias)},
                testing::attrs({{"group", attr_int(2)},
                                {"strides", attr_ints({2, 1})},
                                {"pads", attr_ints({1, 0, 2, 1})},
                                {"dilations", attr_ints({1, 2})}}));
  b.output(b.op("Relu", {y}));
  Session s(b.build(), "conv_geom", "", onednn_first());
  for (Dims xs : {Dims{1, 4, 5, 6}, Dims{2, 4, 8, 3}, Dims{3, 4, 1, 4}}) {
    TensorData tx = tensor(xs);
    auto out = s.run({tx});
    Dims os;
    auto want = ref_conv2d(values(tx), xs, values(w), w.shape, values(bias), {2, 1}, {1, 2}, {1, 0, 2, 1}, 2, &os);
    for (auto &v : want) v = std::max(v, 0.0f);
    expect_near_all(
        out[0], os, want,
        "X [" + std::to_string(xs[0]) + ", 4, " + std::to_string(xs[2]) + ", " + std::to_string(xs[3]) + "]");
  }
  const StepCount c = count_steps(s.last_compile().plan);
  EXPECT_EQ(c.onednn, 1);
  EXPECT_EQ(c.other, 0);
}

TEST(OnednnConv, DepthwiseSameUpperPadsFollowTheRunTimeShape) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 3, sym("h"), sym("w")});
  TensorData w = tensor({3, 1, 3, 3}, 0.5f, 4);
  b.output(
      b.op("Conv", {x, b.constant("w", w)},
           testing::attrs(
               {{"group", attr_int(3)}, {"strides", attr_ints({2, 2})}, {"auto_pad", attr_string("SAME_UPPER")}})));
  Session s(b.build(), "conv_dw", "", onednn_first());
  for (Dims xs : {Dims{1, 3, 7, 6}, Dims{1, 3, 4, 9}}) {
    TensorData tx = tensor(xs);
    auto out = s.run({tx});
    // SAME_UPPER: out = ceil(in / 2), the odd pad goes at the end.
    Dims pads(4);
    for (int d = 0; d < 2; ++d) {
      const int64_t in = xs[2 + d], o = (in + 1) / 2, total = std::max<int64_t>(0, (o - 1) * 2 + 3 - in);
      pads[d] = total / 2;
      pads[d + 2] = total - total / 2;
    }
    Dims os;
    auto want = ref_conv2d(values(tx), xs, values(w), w.shape, {}, {2, 2}, {1, 1}, pads, 3, &os);
    expect_near_all(out[0], os, want, "h " + std::to_string(xs[2]) + " w " + std::to_string(xs[3]));
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).onednn, 1);
}

TEST(OnednnConv, OneDimensionalConvWithInputWeightsAndResidualMatchesTheReference) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 2, sym("l")});
  auto w = b.input("w", DType::F32, {3, 2, 3});
  auto r = b.input("r", DType::F32, {sym("n"), 3, sym("l")});
  auto y = b.op("Conv", {x, w}, testing::attrs({{"pads", attr_ints({1, 1})}}));
  b.output(b.op("Add", {y, r}));
  Session s(b.build(), "conv1d", "", onednn_first());
  for (Dims xs : {Dims{1, 2, 5}, Dims{2, 2, 11}}) {
    TensorData tx = tensor(xs), tw = tensor({3, 2, 3}, 0.5f, 5), tr = tensor({xs[0], 3, xs[2]}, 0.25f, 9);
    auto out = s.run({tx, tw, tr});
    // A 1-D conv is a 2-D conv of height 1.
    Dims os;
    auto want = ref_conv2d(values(tx), {xs[0], 2, 1, xs[2]}, values(tw), {3, 2, 1, 3}, {}, {1, 1}, {1, 1}, {0, 1, 0, 1},
                           1, &os);
    for (size_t i = 0; i < want.size(); ++i) want[i] += tr.as<float>()[i];
    expect_near_all(out[0], {xs[0], 3, xs[2]}, want, "l = " + std::to_string(xs[2]));
  }
  const StepCount c = count_steps(s.last_compile().plan);
  EXPECT_EQ(c.onednn, 1);
  EXPECT_EQ(c.other, 0);
}

TEST(OnednnConv, OneChannelInAndOnePositionOutNeedNoLayoutCopies) {
  // X with one channel and Y with one position read the same in NCHW and NHWC.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 1, 5, 5});
  auto r = b.input("r", DType::F32, {sym("n"), 3, 1, 1});
  TensorData w = tensor({3, 1, 5, 5}, 0.25f, 2);
  b.output(b.op("Sigmoid", {b.op("Add", {b.op("Conv", {x, b.constant("w", w)}), r})}));
  Session s(b.build(), "conv_1x1_out", "", onednn_first());
  for (int64_t n : {1, 4}) {
    TensorData tx = tensor({n, 1, 5, 5}), tr = tensor({n, 3, 1, 1}, 0.5f, 3);
    auto out = s.run({tx, tr});
    Dims os;
    auto want = ref_conv2d(values(tx), tx.shape, values(w), w.shape, {}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, &os);
    for (size_t i = 0; i < want.size(); ++i) want[i] = 1 / (1 + std::exp(-(want[i] + tr.as<float>()[i])));
    expect_near_all(out[0], os, want, "n = " + std::to_string(n));
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).other, 0);
}

// ---- the glue's cache, threads, errors and edge cases ---------------------------

TEST(OnednnKernels, TheShapeCacheStaysWithinItsBoundAndEvictsTheLeastRecentlyUsed) {
  auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "relu:0"}});
  TensorData w = tensor({3, 2}, 0.5f, 1);
  auto run_rows = [&](int64_t m) {
    TensorData a = tensor({m, 3}), y(DType::F32, {m, 2});
    std::vector<ExternTensor> ins{view(a), view(w, true)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    Dims os;
    auto want = ref_matmul(values(a), {m, 3}, values(w), {3, 2}, &os);
    for (auto &v : want) v = std::max(v, 0.0f);
    expect_near_all(y, os, want, "m = " + std::to_string(m));
  };
  const int64_t cap = static_cast<int64_t>(kOnednnCacheCapacity);
  for (int64_t m = 1; m <= cap + 4; ++m) run_rows(m);
  EXPECT_EQ(k->cached_shapes(), kOnednnCacheCapacity);
  EXPECT_EQ(k->primitives_created(), cap + 4);
  run_rows(cap + 4);  // the most recent: still cached
  EXPECT_EQ(k->primitives_created(), cap + 4);
  run_rows(5);  // the oldest still cached, now the most recent
  EXPECT_EQ(k->primitives_created(), cap + 4);
  run_rows(cap + 5);  // new: evicts the least recently used, m = 6
  EXPECT_EQ(k->primitives_created(), cap + 5);
  run_rows(5);
  EXPECT_EQ(k->primitives_created(), cap + 5);
  run_rows(6);
  EXPECT_EQ(k->primitives_created(), cap + 6);
  EXPECT_EQ(k->cached_shapes(), kOnednnCacheCapacity);
}

TEST(OnednnKernels, ARunTimeShapeMismatchIsAnErrorNamingTheStep) {
  auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add"}});
  TensorData a = tensor({2, 3}), w = tensor({4, 2}), bias = tensor({2}), y(DType::F32, {2, 2});
  SymbolValues syms;
  std::vector<ExternTensor> outs{view(y)};
  std::vector<ExternTensor> bad_k{view(a), view(w), view(bias)};
  testing::expect_error_naming([&] { k->run(ExternCall{bad_k, outs, syms}); }, "test_step", "disagree on K (3 vs 4)");
  TensorData w2 = tensor({3, 2}), wide_bias = tensor({3});
  std::vector<ExternTensor> bad_bias{view(a), view(w2), view(wide_bias)};
  testing::expect_error_naming(
      [&] {
        k->run(ExternCall{bad_bias, outs, syms});
      },
      "test_step", "does not broadcast to the result [2, 2]");
  auto conv = make_kernel("onednn.conv", {{"strides", "1"},
                                          {"dilations", "1"},
                                          {"pads", "0,0"},
                                          {"group", "2"},
                                          {"auto_pad", "NOTSET"},
                                          {"post_ops", ""}});
  TensorData x = tensor({1, 3, 5}), cw = tensor({2, 1, 3}), cy(DType::F32, {1, 2, 3});
  std::vector<ExternTensor> cin{view(x), view(cw), {}}, cout{view(cy)};
  testing::expect_error_naming([&] { conv->run(ExternCall{cin, cout, syms}); }, "test_step", "has 3 channels");
}

TEST(OnednnKernels, BadRunTimeShapesThroughASessionAreErrorsNotCrashes) {
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {sym("m"), sym("k")});
  auto w = b.input("w", DType::F32, {sym("k2"), 3});
  b.output(b.op("MatMul", {a, w}));
  Session s(b.build(), "mm_bad", "", onednn_first());
  EXPECT_THROW(s.run({tensor({2, 4}), tensor({5, 3})}), Error);
}

TEST(OnednnKernels, AnEmptyReductionGivesTheEpilogueOfZeros) {
  // K == 0: A B is all zeros; then + bias, then sigmoid.
  auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add,sigmoid"}});
  TensorData a(DType::F32, {2, 0}), w(DType::F32, {0, 3}), bias = testing::f32({3}, {0.0f, 1.0f, -2.0f});
  TensorData y(DType::F32, {2, 3});
  std::vector<ExternTensor> ins{view(a), view(w), view(bias)}, outs{view(y)};
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_NEAR(y.as<float>()[i], 1 / (1 + std::exp(-bias.as<float>()[i % 3])), 1e-6) << i;
}

TEST(OnednnKernels, AConvolutionWithoutInputChannelsGivesTheEpilogueOfTheBias) {
  auto k = make_kernel("onednn.conv", {{"strides", "1,1"},
                                       {"dilations", "1,1"},
                                       {"pads", "0,0,0,0"},
                                       {"group", "1"},
                                       {"auto_pad", "NOTSET"},
                                       {"post_ops", "relu:0"}});
  TensorData x(DType::F32, {2, 0, 3, 3}), w(DType::F32, {2, 0, 1, 1}), bias = testing::f32({2}, {0.5f, -1.0f});
  TensorData y(DType::F32, {2, 2, 3, 3});
  std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  for (int64_t i = 0; i < y.num_elements(); ++i) EXPECT_EQ(y.as<float>()[i], (i / 9) % 2 == 0 ? 0.5f : 0.0f) << i;
}

TEST(OnednnKernels, RepeatedLinearAndClipWithOtherParametersKeepTheirOwnParameters) {
  // oneDNN 2.6 would run both linears (and both clips) with one parameter set.
  auto k = make_kernel(
      "onednn.matmul",
      {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "linear:2:0,clip:-1:5,linear:1:1,relu:0,clip:0:2,relu:0"}});
  TensorData a = tensor({5, 7}), w = tensor({7, 9}, 0.5f, 3), y(DType::F32, {5, 9});
  std::vector<ExternTensor> ins{view(a), view(w, true)}, outs{view(y)};
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  Dims os;
  auto want = ref_matmul(values(a), {5, 7}, values(w), {7, 9}, &os);
  for (auto &v : want) v = std::min(std::max(std::max(std::min(std::max(2 * v, -1.0f), 5.0f) + 1, 0.0f), 0.0f), 2.0f);
  expect_near_all(y, os, want, "linear, clip, linear, relu, clip, relu");
}

TEST(OnednnRules, ASecondReluWithAnotherSlopeEndsTheChain) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 4});
  auto y = b.op("Relu", {b.op("MatMul", {x, b.constant("w", tensor({4, 3}))})});
  b.output(b.op("LeakyRelu", {y}, testing::attrs({{"alpha", attr_float(0.5f)}})));
  Partitioned p = partition_onednn(b.build());
  EXPECT_EQ(p.backend_of("Relu"), "onednn");
  EXPECT_EQ(p.backend_of("LeakyRelu"), "host");
}

TEST(OnednnKernels, ThreadCountsGiveTheSameNumbers) {
  // 37 rows run on one thread whatever the count (below kSerialFlops), 700 on the team.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 64});
  TensorData w = tensor({64, 48}, 0.125f, 2);
  b.output(b.op("Relu", {b.op("MatMul", {x, b.constant("w", w)})}));
  Session s(b.build(), "mm_threads", "", onednn_first());
  for (int64_t m : {37, 700}) {
    TensorData tx = tensor({m, 64}, 0.01f);
    Dims os;
    auto want = ref_matmul(values(tx), {m, 64}, values(w), {64, 48}, &os);
    for (auto &v : want) v = std::max(v, 0.0f);
    for (int threads : {1, 2, 1}) {
      s.set_num_threads(threads);
      expect_near_all(s.run({tx})[0], os, want, std::to_string(m) + " rows, " + std::to_string(threads) + " thread(s)");
    }
  }
}

// libgomp's, declared here so that the test needs no OpenMP flags.

// ---- inner product -------------------------------------------------------------

struct IpCase {
  std::string post_ops;
  bool trans_b = false, constant = true;
  std::string primitive;  // what must run it
};

TEST(OnednnKernels, ConstantWeightsRunAsAnInnerProductWithBiasAndSummedResidual) {
  // A [m, 7] x W (+ bias [9] or [1, 9]) (+ residual [m, 9]), then Relu; W is
  // [7, 9] or, transposed, [9, 7]. The bias and the residual leave the binary
  // post-ops: the first as the inner product's bias, the second as a sum.
  const std::vector<IpCase> cases = {
      {"add,add,relu:0", false, true, "inner_product"},
      {"add,add,relu:0", true, true, "inner_product"},
      {"relu:0,add", false, true, "inner_product"},  // a late Add of [9] stays a binary post-op
      {"add,add,relu:0", false, false, "matmul"},    // weights that change per run
  };
  for (const IpCase &c : cases) {
    auto k = make_kernel("onednn.matmul",
                         {{"trans_a", "0"}, {"trans_b", c.trans_b ? "1" : "0"}, {"post_ops", c.post_ops}});
    for (int64_t m : {1, 6, 40}) {
      for (bool flat_bias : {true, false}) {
        TensorData a = tensor({m, 7}, 0.125f), w = tensor(c.trans_b ? Dims{9, 7} : Dims{7, 9}, 0.25f, 3);
        TensorData bias = tensor(flat_bias ? Dims{9} : Dims{1, 9}, 0.5f, 1), res = tensor({m, 9}, 0.75f, 5);
        TensorData y(DType::F32, {m, 9});
        std::vector<ExternTensor> ins{view(a), view(w, c.constant), view(bias)}, outs{view(y)};
        if (c.post_ops != "relu:0,add") ins.push_back(view(res));
        SymbolValues syms;
        k->run(ExternCall{ins, outs, syms});
        std::vector<float> wt(63);  // W as [7, 9]
        for (int64_t i = 0; i < 7; ++i)
          for (int64_t j = 0; j < 9; ++j) wt[i * 9 + j] = c.trans_b ? w.as<float>()[j * 7 + i] : w.as<float>()[i * 9 + j];
        Dims os;
        auto want = ref_matmul(values(a), {m, 7}, wt, {7, 9}, &os);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < 9; ++j) {
            float &v = want[i * 9 + j];
            if (c.post_ops == "relu:0,add")
              v = std::max(v, 0.0f) + bias.as<float>()[j];
            else
              v = std::max(v + bias.as<float>()[j] + res.as<float>()[i * 9 + j], 0.0f);
          }
        const std::string what = c.post_ops + (c.trans_b ? " trans_b" : "") + (c.constant ? "" : " variable W") +
                                 " m = " + std::to_string(m) + (flat_bias ? "" : " bias [1, 9]");
        expect_near_all(y, os, want, what);
        EXPECT_EQ(k->implementation().rfind(c.primitive + " ", 0), 0u) << what << ": " << k->implementation();
      }
    }
  }
}

// 8 to 128 rows, constant weights, N a multiple of 32 and an epilogue of
// adds, multiplies, Relu, GELU and linear steps: disco's panel product
// (panel_gemm.h), every block of rows (8, 4 and 1) and operand shape (bias,
// per row, full) used, on one thread, on two (sharing the panels) and on
// three (a pair and a thread alone); one row and 129 rows run oneDNN's.
TEST(OnednnKernels, FewRowsRunThePanelProductWithItsEpilogue) {
  if (!panel_gemm_cpu()) GTEST_SKIP() << "the panel product needs AVX-512, which this CPU lacks";
  const int64_t kk = 601, n = 896;  // 2.05 MiB of weights: over the 2 MiB that teams of threads need
  TensorData w = tensor({kk, n}, 0.05f, 3), bias = tensor({n}, 0.5f, 1);
  struct Case {
    std::string post_ops;
    bool per_row;  // the second operand is [m, 1] (else [m, n])
  };
  for (const Case &c : {Case{"add,gelu_erf", false}, Case{"add,add", false}, Case{"relu:0.1,linear:0.5:0.25,mul,add", true}}) {
    for (const auto &[threads, m] : std::vector<std::pair<int, int64_t>>{{1, 1}, {1, 13}, {1, 128}, {1, 129}, {2, 13}, {2, 128}, {3, 40}}) {
      auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", c.post_ops}});
      k->set_num_threads(threads);
      // Twice, with another second operand (both alive, so at two addresses):
      // each run reads its own operands.
      TensorData seconds[2] = {tensor({m, c.per_row ? 1 : n}, 0.75f, 4), tensor({m, c.per_row ? 1 : n}, 0.75f, 5)};
      for (int round = 0; round < 2; ++round) {
        TensorData a = tensor({m, kk}, 0.1f, 2), y(DType::F32, {m, n});
        TensorData &second = seconds[round];
        std::vector<ExternTensor> ins{view(a), view(w, true)};
        if (c.post_ops.rfind("add", 0) == 0) ins.push_back(view(bias));
        if (c.post_ops != "add,gelu_erf") ins.push_back(view(second));
        if (c.post_ops.rfind("relu", 0) == 0) ins.push_back(view(bias));
        std::vector<ExternTensor> outs{view(y)};
        SymbolValues syms;
        k->run(ExternCall{ins, outs, syms});
        Dims os;
        auto want = ref_matmul(values(a), {m, kk}, values(w), {kk, n}, &os);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            float &v = want[i * n + j];
            const float b = bias.as<float>()[j], s = second.as<float>()[c.per_row ? i : i * n + j];
            if (c.post_ops == "add,gelu_erf")
              v = static_cast<float>(gelu(double(v) + b));
            else if (c.post_ops == "add,add")
              v = v + b + s;
            else
              v = ((v < 0 ? 0.1f * v : v) * 0.5f + 0.25f) * s + b;
          }
        const std::string what = c.post_ops + " m = " + std::to_string(m) + " on " + std::to_string(threads) +
                                 ", run " + std::to_string(round);
        expect_near_all(y, os, want, what);
        const bool panel = k->implementation().rfind("panel_gemm ", 0) == 0;
        EXPECT_EQ(panel, m >= 8 && m <= 128) << what << ": " << k->implementation();
      }
    }
  }
}

// On two threads the panel product takes only weights beyond 2 MiB: smaller
// ones stay in the L2, where oneDNN's product has no fetch to hide.
TEST(OnednnKernels, TeamsLeaveWeightsThatFitTheL2ToOnednn) {
  if (!panel_gemm_cpu()) GTEST_SKIP() << "the panel product needs AVX-512, which this CPU lacks";
  for (const auto &[kk, threads, want_panel] : std::vector<std::tuple<int64_t, int, bool>>{
           {512, 2, false}, {512, 1, true}, {768, 2, true}}) {
    auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", ""}});
    k->set_num_threads(threads);
    TensorData w = tensor({kk, 768}, 0.05f, 3), a = tensor({32, kk}, 0.1f, 2), y(DType::F32, {32, 768});
    std::vector<ExternTensor> ins{view(a), view(w, true)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    Dims os;
    const std::string what = std::to_string(kk) + " x 768 weights on " + std::to_string(threads) + " thread(s)";
    expect_near_all(y, os, ref_matmul(values(a), {32, kk}, values(w), {kk, 768}, &os), what);
    EXPECT_EQ(k->implementation().rfind("panel_gemm ", 0) == 0, want_panel) << what << ": " << k->implementation();
  }
}

TEST(OnednnKernels, ManyRowsWithWeightsBeyondTheCacheRunAsAMatmul) {
  // 768 x 768 floats (2.25 MiB), one thread: the panel product up to 128
  // rows (without AVX-512 an inner product up to 64), a matmul above.
  auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add"}});
  k->set_num_threads(1);
  TensorData w = tensor({768, 768}, 1e-4f, 5), bias = tensor({768}, 0.5f, 1);
  for (int64_t m : {64, 65, 128, 129}) {
    TensorData a = tensor({m, 768}, 1e-3f), y(DType::F32, {m, 768});
    std::vector<ExternTensor> ins{view(a), view(w, true), view(bias)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    Dims os;
    auto want = ref_matmul(values(a), {m, 768}, values(w), {768, 768}, &os);
    for (int64_t i = 0; i < m * 768; ++i) want[i] += bias.as<float>()[i % 768];
    expect_near_all(y, os, want, "m = " + std::to_string(m));
    const char *want_impl = panel_gemm_cpu() && m <= 128 ? "panel_gemm " : m <= 64 ? "inner_product " : "matmul ";
    EXPECT_EQ(k->implementation().rfind(want_impl, 0), 0u) << m << ": " << k->implementation();
  }
}

TEST(OnednnKernels, AResidualThatIsAlsoTheOutputBufferIsSummedInPlace) {
  // The sum post-op reads the destination's old contents: when the residual
  // already lives there, the copy is skipped and the result is the same; so
  // too in the panel product, which reads each residual value just before it
  // writes that place.
  struct Case {
    int64_t m, k, n;
    const char *impl;
  };
  for (const Case &c : {Case{4, 5, 3, "inner_product "}, Case{128, 1100, 64, "panel_gemm "}}) {
    auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add"}});
    k->set_num_threads(1);
    TensorData a = tensor({c.m, c.k}, 0.1f), w = tensor({c.k, c.n}, 0.5f, 2), y = tensor({c.m, c.n}, 0.75f, 1);
    const std::vector<float> res = values(y);
    std::vector<ExternTensor> ins{view(a), view(w, true), view(y)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    Dims os;
    auto want = ref_matmul(values(a), {c.m, c.k}, values(w), {c.k, c.n}, &os);
    for (size_t i = 0; i < want.size(); ++i) want[i] += res[i];
    expect_near_all(y, os, want, "residual in the output buffer, m = " + std::to_string(c.m));
    if (c.m == 128 && !panel_gemm_cpu()) continue;
    EXPECT_EQ(k->implementation().rfind(c.impl, 0), 0u) << k->implementation();
  }
}

}  // namespace
}  // namespace disco
