// The oneDNN backend's glue (targets/onednn/onednn_kernels.h): its shape
// cache bound, run-time shape errors, empty reductions, thread counts, and the
// inner-product and panel-product paths against scalar references.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "targets/onednn/panel_gemm.h"
#include "driver/session.h"
#include "tests/support/jit_eval.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

// ---- the glue's cache, threads, errors and edge cases ---------------------------

// A Conv step's params: strides and dilations `ones`, explicit pads.
std::map<std::string, std::string> conv_params(const std::string &ones, const std::string &pads,
                                               const std::string &group, const std::string &post_ops) {
  return {{"strides", ones}, {"dilations", ones}, {"pads", pads},
          {"group", group},  {"auto_pad", "NOTSET"}, {"post_ops", post_ops}};
}

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
  auto conv = make_kernel("onednn.conv", conv_params("1", "0,0", "2", ""));
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
  auto k = make_kernel("onednn.conv", conv_params("1,1", "0,0,0,0", "1", "relu:0"));
  TensorData x(DType::F32, {2, 0, 3, 3}), w(DType::F32, {2, 0, 1, 1}), bias = testing::f32({2}, {0.5f, -1.0f});
  TensorData y(DType::F32, {2, 2, 3, 3});
  std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  for (int64_t i = 0; i < y.num_elements(); ++i) EXPECT_EQ(y.as<float>()[i], (i / 9) % 2 == 0 ? 0.5f : 0.0f) << i;
}

TEST(OnednnKernels, AConvolutionWithoutInputChannelsAddsAResidualHeldInItsOwnResult) {
  // The memory plan may give Y the residual's bytes (memory_plan.h's kOutputReusesInput).
  auto k = make_kernel("onednn.conv", conv_params("1,1", "0,0,0,0", "1", "add,relu:0"));
  TensorData x(DType::F32, {1, 0, 2, 2}), w(DType::F32, {2, 0, 1, 1}), bias = testing::f32({2}, {0.5f, -1.0f});
  TensorData y = testing::f32({1, 2, 2, 2}, {1.0f, -2.0f, 3.0f, -0.25f, 4.0f, 0.5f, 2.0f, -3.0f});
  const std::vector<float> residual = values(y);
  std::vector<ExternTensor> ins{view(x), view(w, true), view(bias), view(y)}, outs{view(y)};
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  for (int64_t i = 0; i < y.num_elements(); ++i)
    EXPECT_EQ(y.as<float>()[i], std::max(residual[i] + bias.as<float>()[i / 4], 0.0f)) << i;
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

// ---- the activations of squeeze-excitation CNNs as post-ops ----------------------

// The activations in float64, as ONNX defines them.
double silu(double v, double beta = 1) { return v / (1 + std::exp(-beta * v)); }
double hard_sigmoid(double v, double alpha, double beta) { return std::min(std::max(alpha * v + beta, 0.0), 1.0); }
double hard_swish(double v) { return v * hard_sigmoid(v, 1.0 / 6, 0.5); }

TEST(OnednnKernels, SwishHardSwishAndHardSigmoidPostOpsOfAConvolutionMatchFloat64) {
  // A 16-channel 3x3 convolution with bias (values about -6 to 6, so that
  // HardSwish's and HardSigmoid's clamps both bind), then each activation.
  struct Case {
    std::string post_ops;
    double (*act)(double);
  };
  const std::vector<Case> cases = {
      {"swish:1", [](double v) { return silu(v); }},
      {"swish:0.5", [](double v) { return silu(v, 0.5); }},
      {"hardswish", [](double v) { return hard_swish(v); }},
      {"linear:0.25:0.375,clip:0:1", [](double v) { return hard_sigmoid(v, 0.25, 0.375); }},
      {"swish:1,hardswish", [](double v) { return hard_swish(silu(v)); }},
  };
  TensorData w = random_f32({16, 16, 3, 3}, 51, 0.25f), bias = random_f32({16}, 52, 0.5f);
  for (const Case &c : cases) {
    auto k = make_kernel("onednn.conv", conv_params("1,1", "1,1,1,1", "1", c.post_ops));
    for (Dims xs : {Dims{1, 16, 7, 9}, Dims{2, 16, 5, 4}}) {
      TensorData x = random_f32(xs, 53, 2.0f), y(DType::F32, {xs[0], 16, xs[2], xs[3]});
      std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
      SymbolValues syms;
      k->run(ExternCall{ins, outs, syms});
      Dims os;
      auto want = ref_conv2d(values(x), xs, values(w), w.shape, values(bias), {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, &os);
      for (auto &v : want) v = static_cast<float>(c.act(v));
      const std::string what = c.post_ops + " n " + std::to_string(xs[0]);
      expect_near_all(y, os, want, what);
      EXPECT_EQ(k->implementation().find("ref"), std::string::npos) << what << ": " << k->implementation();
    }
  }
}

TEST(OnednnKernels, WithoutInputChannelsSwishAndHardSwishApplyToTheBias) {
  // No reduction: the glue's scalar post-ops (apply_post_ops_scalar) run them.
  TensorData bias = testing::f32({3}, {-4.0f, 0.5f, 5.0f});
  for (const auto &[post_ops, act] : std::vector<std::pair<std::string, double (*)(double)>>{
           {"swish:1", [](double v) { return silu(v); }},
           {"hardswish", [](double v) { return hard_swish(v); }},
           {"linear:0.25:0.375,clip:0:1", [](double v) { return hard_sigmoid(v, 0.25, 0.375); }}}) {
    auto k = make_kernel("onednn.conv", conv_params("1,1", "0,0,0,0", "1", post_ops));
    TensorData x(DType::F32, {1, 0, 2, 2}), w(DType::F32, {3, 0, 1, 1}), y(DType::F32, {1, 3, 2, 2});
    std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    for (int64_t i = 0; i < y.num_elements(); ++i)
      EXPECT_NEAR(y.as<float>()[i], act(bias.as<float>()[i / 4]), 1e-6) << post_ops << " " << i;
  }
}

// Global average pooling of NCHW in float64.
TEST(OnednnKernels, SqueezeExcitationBlocksWithSiluAndHardSwishRunTheirActivationsInOnednn) {
  // MobileNetV3's and EfficientNet's block as PyTorch exports it: an expand
  // conv, SiLU (Mul(c, Sigmoid(c))), a depthwise conv, HardSwish, then the
  // squeeze-excitation (GlobalAveragePool, conv, Relu, conv, HardSigmoid)
  // scaling the map, and a project conv. The scaling Mul (its scale computed
  // from its other operand) is a oneDNN step of its own (onednn_binary.cc).
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 8, sym("h"), sym("w")});
  TensorData w1 = random_f32({16, 8, 1, 1}, 61, 0.5f), w2 = random_f32({16, 1, 3, 3}, 62, 0.5f),
             w3 = random_f32({8, 16, 1, 1}, 63, 0.5f), w4 = random_f32({16, 8, 1, 1}, 64, 0.5f),
             w5 = random_f32({8, 16, 1, 1}, 65, 0.5f), b4 = random_f32({16}, 66, 0.5f);
  auto c1 = b.op("Conv", {x, b.constant("w1", w1)});
  auto a1 = b.op("Mul", {c1, b.op("Sigmoid", {c1})});
  auto a2 = b.op("HardSwish", {b.op("Conv", {a1, b.constant("w2", w2)},
                                    attrs({{"group", attr_int(16)}, {"pads", attr_ints({1, 1, 1, 1})}}))});
  auto sq = b.op("Relu", {b.op("Conv", {b.op("GlobalAveragePool", {a2}), b.constant("w3", w3)})});
  auto gate = b.op("HardSigmoid", {b.op("Conv", {sq, b.constant("w4", w4), b.constant("b4", b4)})},
                   attrs({{"alpha", attr_float(1.0f / 6)}, {"beta", attr_float(0.5f)}}));
  b.output(b.op("Conv", {b.op("Mul", {a2, gate}), b.constant("w5", w5)}));
  Session s(b.build(), "se_block", "", onednn_first());
  const Dims one{1, 1}, none{0, 0, 0, 0};
  for (Dims xs : {Dims{1, 8, 6, 6}, Dims{2, 8, 5, 7}}) {
    TensorData tx = random_f32(xs, 67, 2.0f);
    auto out = s.run({tx});
    Dims s1, s2, sp, s3, s4, s5;
    auto h = ref_conv2d(values(tx), xs, values(w1), w1.shape, {}, one, one, none, 1, &s1);
    for (auto &v : h) v = static_cast<float>(silu(v));
    h = ref_conv2d(h, s1, values(w2), w2.shape, {}, one, one, {1, 1, 1, 1}, 16, &s2);
    for (auto &v : h) v = static_cast<float>(hard_swish(v));
    auto g = ref_conv2d(ref_global_average(h, s2, &sp), sp, values(w3), w3.shape, {}, one, one, none, 1, &s3);
    for (auto &v : g) v = std::max(v, 0.0f);
    g = ref_conv2d(g, s3, values(w4), w4.shape, values(b4), one, one, none, 1, &s4);
    for (auto &v : g) v = static_cast<float>(hard_sigmoid(v, 1.0 / 6, 0.5));
    for (int64_t i = 0; i < numel(s2); ++i) h[i] *= g[i / (s2[2] * s2[3])];
    auto want = ref_conv2d(h, s2, values(w5), w5.shape, {}, one, one, none, 1, &s5);
    expect_near_all(out[0], s5, want, "n " + std::to_string(xs[0]) + " h " + std::to_string(xs[2]));
  }
  const StepCount c = count_steps(s.last_compile().plan);
  EXPECT_EQ(c.onednn, 7);  // five convolutions, the pooling and the scaling Mul
  EXPECT_EQ(c.other, 0);
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
        // The Add after the Relu at one row made a sum post-op that oneDNN ran on its reference code.
        EXPECT_EQ(k->implementation().find("ref"), std::string::npos) << what << ": " << k->implementation();
      }
    }
  }
}

// 8 to panel_max_rows() rows (64 or 128 by the L2), constant weights, N a
// multiple of 32 and an epilogue of
// adds, multiplies, Relu, GELU and linear steps: disco's panel product
// (panel_gemm.h), every block of rows (8, 4 and 1) and operand shape (bias,
// per row, full) used, on one thread, on two (sharing the panels) and on
// three (a pair and a thread alone); one row and more than the most rows
// (65 or 129) run oneDNN's.
TEST(OnednnKernels, FewRowsRunThePanelProductWithItsEpilogue) {
  if (!panel_gemm_cpu()) GTEST_SKIP() << "the panel product needs AVX-512, which this CPU lacks";
  const int64_t kk = 601, n = 896;  // 2.05 MiB of weights: over the 2 MiB that teams of threads need
  TensorData w = tensor({kk, n}, 0.05f, 3), bias = tensor({n}, 0.5f, 1);
  struct Case {
    std::string post_ops;
    bool per_row;  // the second operand is [m, 1] (else [m, n])
  };
  for (const Case &c : {Case{"add,gelu_erf", false}, Case{"add,add", false}, Case{"relu:0.1,linear:0.5:0.25,mul,add", true}}) {
    for (const auto &[threads, m] : std::vector<std::pair<int, int64_t>>{{1, 1},
                                                                         {1, 13},
                                                                         {1, panel_max_rows()},
                                                                         {1, panel_max_rows() + 1},
                                                                         {2, 13},
                                                                         {2, panel_max_rows()},
                                                                         {3, 40}}) {
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
        EXPECT_EQ(panel, m >= 8 && m <= panel_max_rows()) << what << ": " << k->implementation();
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
  // 768 x 768 floats (2.25 MiB), one thread: with AVX-512 the panel product
  // up to panel_max_rows() (64 or 128) and above that an inner product up to
  // 64 rows, a matmul past them; with AVX2 only, an inner product up to 64
  // rows, the AVX2 panel product from 65 to 448, a matmul above.
  auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add"}});
  k->set_num_threads(1);
  TensorData w = tensor({768, 768}, 1e-4f, 5), bias = tensor({768}, 0.5f, 1);
  for (int64_t m : {64, 65, 128, 129, 448, 449}) {
    TensorData a = tensor({m, 768}, 1e-3f), y(DType::F32, {m, 768});
    std::vector<ExternTensor> ins{view(a), view(w, true), view(bias)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    Dims os;
    auto want = ref_matmul(values(a), {m, 768}, values(w), {768, 768}, &os);
    for (int64_t i = 0; i < m * 768; ++i) want[i] += bias.as<float>()[i % 768];
    expect_near_all(y, os, want, "m = " + std::to_string(m));
    const bool avx2_only = !panel_gemm_cpu() && panel_gemm_avx2_cpu();
    const char *want_impl = panel_gemm_cpu() && m <= panel_max_rows() ? "panel_gemm "
                            : m <= 64                                 ? "inner_product "
                            : avx2_only && m <= 448                   ? "panel_gemm "
                                                                      : "matmul ";
    EXPECT_EQ(k->implementation().rfind(want_impl, 0), 0u) << m << ": " << k->implementation();
  }
}

// With AVX2 only, 9 to 64 rows take the AVX2 panel product where N is a
// multiple of 512 and the weights are 1 MiB or more (oneDNN 2.6's gemm:jit
// is slow at such N), with its epilogue (bias, GELU); other widths, and one
// row, stay with oneDNN's inner product.
TEST(OnednnKernels, Avx2FewRowsOfWideWeightsRunThePanelProduct) {
  if (panel_gemm_cpu() || !panel_gemm_avx2_cpu()) GTEST_SKIP() << "the rule of CPUs with AVX2 and without AVX-512";
  struct Case {
    int64_t m, k, n;
    const char *impl;
  };
  for (const Case &c : {Case{49, 512, 1024, "panel_gemm "}, Case{9, 512, 1024, "panel_gemm "},
                        Case{64, 256, 1536, "panel_gemm "}, Case{49, 512, 768, "inner_product "},
                        Case{49, 128, 1024, "inner_product "}, Case{1, 512, 1024, "inner_product "}}) {
    auto k = make_kernel("onednn.matmul", {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add,gelu_erf"}});
    k->set_num_threads(1);
    TensorData w = tensor({c.k, c.n}, 0.05f, 3), bias = tensor({c.n}, 0.5f, 1), a = tensor({c.m, c.k}, 0.1f, 2),
               y(DType::F32, {c.m, c.n});
    std::vector<ExternTensor> ins{view(a), view(w, true), view(bias)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    Dims os;
    auto want = ref_matmul(values(a), {c.m, c.k}, values(w), {c.k, c.n}, &os);
    for (int64_t i = 0; i < c.m * c.n; ++i) want[i] = static_cast<float>(gelu(double(want[i]) + bias.as<float>()[i % c.n]));
    const std::string what = std::to_string(c.m) + " x " + std::to_string(c.k) + " x " + std::to_string(c.n);
    expect_near_all(y, os, want, what);
    EXPECT_EQ(k->implementation().rfind(c.impl, 0), 0u) << what << ": " << k->implementation();
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
  for (const Case &c : {Case{4, 5, 3, "inner_product "}, Case{64, 1100, 64, "panel_gemm "}}) {
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
    if (c.m == 64 && !panel_gemm_cpu()) continue;
    EXPECT_EQ(k->implementation().rfind(c.impl, 0), 0u) << k->implementation();
  }
}

}  // namespace
}  // namespace disco
