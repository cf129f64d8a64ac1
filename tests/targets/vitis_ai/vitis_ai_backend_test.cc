// The vitis_ai backend (targets/vitis_ai/): the DPU patterns its rules take,
// the limits they decline with a reason, the fix positions it describes for
// `disco inspect`, a small conv net run in int8, and a region that cannot be
// quantized falling back to the host with a message (never reaching XIR).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "driver/backend_registry.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "driver/compile_model.h"
#include "targets/partitioner.h"
#include "driver/session.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::Partitioned;
using testing::random_f32;  // f32(shape, seed, scale)
using testing::sym;

Partitioned partition_vitis(Graph g) { return testing::partition_for(std::move(g), {"vitis_ai", "host"}, {}); }

CompileOptions vitis_options() {
  CompileOptions o;
  o.backends = {"vitis_ai", "host"};
  o.use_cache = false;
  return o;
}

// X [n, C, h, w] -> Conv (constant W, B, attributes) -> Relu.
Graph conv_graph(int64_t channels, std::vector<int64_t> w_shape, Attributes attrs) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), channels, sym("h"), sym("w")});
  auto w = b.constant("w", random_f32(w_shape, 1, 0.3f));
  auto bias = b.constant("b", random_f32({w_shape[0]}, 2, 0.1f));
  b.output(b.op("Relu", {b.op("Conv", {x, w, bias}, std::move(attrs))}));
  return b.build();
}

TEST(VitisAiBackend, TakesConvWithBatchNormAndActivationAsOneUnit) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
  auto c = b.op("Conv", {x, b.constant("w", random_f32({8, 4, 3, 3}, 1))}, {{"pads", attr_ints({1, 1, 1, 1})}});
  auto bn =
      b.op("BatchNormalization", {c, b.constant("s", random_f32({8}, 2)), b.constant("o", random_f32({8}, 3)),
                                  b.constant("m", random_f32({8}, 4)), b.constant("v", random_f32({8}, 5, 0.2f))});
  // Clip to [0, 6] is Relu6.
  b.output(
      b.op("Clip", {bn, b.constant("lo", TensorData::scalar_f32(0)), b.constant("hi", TensorData::scalar_f32(6))}));
  Partitioned p = partition_vitis(b.build());
  EXPECT_EQ(p.backend_of("Conv"), "vitis_ai") << p.notes();
  EXPECT_EQ(p.backend_of("BatchNormalization"), "vitis_ai");
  EXPECT_EQ(p.backend_of("Clip"), "vitis_ai");
  ASSERT_EQ(p.partition.regions.size(), 1u);
  EXPECT_EQ(p.partition.regions[0].units.at(0).nodes.size(), 3u);
}

TEST(VitisAiBackend, DescribesTheFixPositionsOfEachRegionForInspect) {
  Partitioned p = partition_vitis(conv_graph(3, {4, 3, 3, 3}, {{"pads", attr_ints({1, 1, 1, 1})}}));
  const std::string text = make_backend("vitis_ai")->describe(p.graph, p.store, p.partition.regions);
  EXPECT_NE(text.find("calibrated on 8 samples of N(0, 1) noise"), std::string::npos) << text;
  EXPECT_NE(text.find("input x: fix "), std::string::npos) << text;
  EXPECT_NE(text.find("weights fix "), std::string::npos) << text;
  EXPECT_NE(text.find("output fix "), std::string::npos) << text;
  // The weights are uniform in [-0.3, 0.3]: the covering fix position is floor(log2(127 / 0.3)) = 8, and
  // the least-squares choice is at most two above it.
  const size_t at = text.find("weights fix ");
  ASSERT_NE(at, std::string::npos);
  const int wfix = std::atoi(text.c_str() + at + 12);
  EXPECT_GE(wfix, 8);
  EXPECT_LE(wfix, 10);
}

using Decline = testing::DeclineCase;

TEST(VitisAiBackend, DeclinesWhatTheDpuCannotRunAndTheHostTakesIt) {
  std::vector<Decline> cases;
  cases.push_back({"17x17 kernel", conv_graph(2, {4, 2, 17, 17}, {}), "Conv", "kernel 17x17 outside [1, 16]"});
  cases.push_back({"stride 9", conv_graph(2, {4, 2, 3, 3}, {{"strides", attr_ints({9, 9})}}), "Conv",
                   "stride outside [1, 8]"});
  cases.push_back({"grouped, not depthwise", conv_graph(4, {4, 2, 3, 3}, {{"group", attr_int(2)}}), "Conv",
                   "neither 1 nor depthwise"});
  cases.push_back({"pad 3 for a 3x3 kernel", conv_graph(2, {4, 2, 3, 3}, {{"pads", attr_ints({3, 3, 3, 3})}}),
                   "Conv", "outside [0, kernel - 1]"});
  cases.push_back({"dilation with stride 2",
                   conv_graph(2, {4, 2, 3, 3}, {{"dilations", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}),
                   "Conv", "dilation with a stride other than 1"});
  cases.push_back({"5000 output channels", conv_graph(2, {5000, 2, 1, 1}, {}), "Conv", "exceed 4096"});
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 2, sym("h"), sym("w")});
    auto w = b.input("w", DType::F32, {4, 2, 3, 3});
    b.output(b.op("Conv", {x, w}));
    cases.push_back({"weights as input", b.build(), "Conv", "weights are not a float32 constant"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
    b.output(b.op("MaxPool", {x}, {{"kernel_shape", attr_ints({9, 9})}}));
    cases.push_back({"9x9 max pool", b.build(), "MaxPool", "kernel outside [1, 8]"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
    b.output(b.op("AveragePool", {x}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}}));
    cases.push_back({"average pool excluding pads", b.build(), "AveragePool", "excludes pads"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
    b.output(b.op("Add", {x, b.constant("c", random_f32({1, 4, 1, 1}, 3))}));
    cases.push_back({"add of a constant", b.build(), "Add", "a constant operand"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
    auto y = b.input("y", DType::F32, {sym("m"), 4, sym("h"), sym("w")});
    b.output(b.op("Add", {x, y}));
    cases.push_back({"add that may broadcast", b.build(), "Add", "shapes may differ"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 8});
    b.output(b.op("MatMul", {x, b.input("w", DType::F32, {8, 4})}));
    cases.push_back({"matmul of two inputs", b.build(), "MatMul", "weights are not a 2-D float32 constant"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
    b.output(b.op("Sigmoid", {x}));
    cases.push_back({"sigmoid", b.build(), "Sigmoid", ""});
  }
  for (auto &c : cases) {
    Partitioned p = partition_vitis(std::move(c.graph));
    EXPECT_EQ(p.backend_of(c.op), "host") << c.what;
    if (*c.reason) {
      EXPECT_TRUE(p.has_note(c.reason)) << c.what << ": no note '" << c.reason << "' in\n" << p.notes();
    }
  }
}

// x -> Conv(3x3, pad 1, stride 2) -> Relu -> MaxPool(2x2, stride 2) -> y, one region,
// within a quantization step of the float result computed here.
TEST(VitisAiBackend, RunsASmallNetWithinOneQuantizationStepOfTheFloatResult) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 2, 6, 6});
  TensorData w(DType::F32, {3, 2, 3, 3});
  for (int64_t i = 0; i < w.num_elements(); ++i) w.mutable_as<float>()[i] = static_cast<float>((i * 7 % 11) - 5) / 8;
  auto c = b.op("Conv", {x, b.constant("w", w)}, {{"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({2, 2})}});
  b.output(b.op("MaxPool", {b.op("Relu", {c})}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}));
  Session s(b.build(), "small", "", vitis_options());
  TensorData in(DType::F32, {1, 2, 6, 6});
  for (int64_t i = 0; i < in.num_elements(); ++i) in.mutable_as<float>()[i] = static_cast<float>((i * 5 % 9) - 4) / 4;
  const TensorData out = s.run({in})[0];
  ASSERT_EQ(out.shape, (std::vector<int64_t>{1, 3, 1, 1}));
  int vitis_steps = 0;
  for (const auto &st : s.last_compile().plan.steps) vitis_steps += st.extern_call == "vitis_ai.region";
  EXPECT_EQ(vitis_steps, 1);
  // The float result, computed here; at these values the int8 result differs
  // from it by at most half a step of the output's fix position (>= 2^-7 here).
  for (int m = 0; m < 3; ++m) {
    float best = 0;
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 2; ++ow) {
        double acc = 0;
        for (int ci = 0; ci < 2; ++ci)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              const int ih = oh * 2 + kh - 1, iw = ow * 2 + kw - 1;
              if (ih < 0 || ih >= 6 || iw < 0 || iw >= 6) continue;
              acc += double(in.as<float>()[(ci * 6 + ih) * 6 + iw]) * w.as<float>()[((m * 2 + ci) * 3 + kh) * 3 + kw];
            }
        best = std::max(best, static_cast<float>(acc));
      }
    const float got = out.as<float>()[m];
    const float step = std::ldexp(1.0f, -static_cast<int>(std::floor(std::log2(127.0 / std::max(best, 1e-3f)))));
    EXPECT_LE(std::fabs(got - best), step) << "channel " << m;
  }
}

// Depthwise conv + LeakyRelu, concat, padded average pool, nearest resize,
// grouped-free 1x1 conv + Relu6, Gemm: one vitis_ai region whose int8 result
// stays within 5% (relative L2) of the host's float result.
TEST(VitisAiBackend, MixedDpuOpsRunInOneRegionCloseToTheFloatResult) {
  auto build = [] {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4, 8, 8});
    auto dw =
        b.op("Conv",
             {x, b.constant("dw_w", random_f32({4, 1, 3, 3}, 11, 0.5f)), b.constant("dw_b", random_f32({4}, 12, 0.1f))},
             {{"group", attr_int(4)}, {"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({1, 1})}});
    auto leaky = b.op("LeakyRelu", {dw}, {{"alpha", attr_float(0.1f)}});
    auto cat = b.op("Concat", {leaky, x}, {{"axis", attr_int(1)}});
    auto pool = b.op("AveragePool", {cat}, {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})},
                                            {"pads", attr_ints({1, 1, 1, 1})}, {"count_include_pad", attr_int(1)}});
    TensorData scales(DType::F32, {4});
    const float sc[4] = {1, 1, 2, 2};
    for (int i = 0; i < 4; ++i) scales.mutable_as<float>()[i] = sc[i];
    auto up = b.op("Resize", {pool, "", b.constant("scales", scales)},
                   {{"mode", attr_string("nearest")}, {"coordinate_transformation_mode", attr_string("asymmetric")},
                    {"nearest_mode", attr_string("floor")}});
    auto c = b.op(
        "Conv", {up, b.constant("w", random_f32({6, 8, 1, 1}, 13, 0.5f)), b.constant("b", random_f32({6}, 14, 0.2f))});
    auto r6 =
        b.op("Clip", {c, b.constant("lo", TensorData::scalar_f32(0)), b.constant("hi", TensorData::scalar_f32(6))});
    auto gap = b.op("Flatten", {b.op("GlobalAveragePool", {r6})}, {{"axis", attr_int(1)}});
    b.output(b.op("Gemm",
                  {gap, b.constant("fc", random_f32({5, 6}, 15, 0.5f)), b.constant("fcb", random_f32({5}, 16, 0.1f))},
                  {{"transB", attr_int(1)}}));
    return b.build();
  };
  Session q(build(), "mixed_q", "", vitis_options());
  CompileOptions host = vitis_options();
  host.backends = {"host"};
  Session f(build(), "mixed_f", "", host);
  int regions = 0;
  for (const auto &st : q.last_compile().plan.steps) regions += st.extern_call == "vitis_ai.region";
  EXPECT_EQ(regions, 1);
  TensorData x(DType::F32, {16, 4, 8, 8});
  uint32_t seed = 5;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    x.mutable_as<float>()[i] = static_cast<float>(seed >> 8) / 16777216.0f * 4 - 2;
  }
  const TensorData got = q.run({x})[0], want = f.run({x})[0];
  ASSERT_EQ(got.shape, (std::vector<int64_t>{16, 5}));
  double num = 0, den = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double d = double(got.as<float>()[i]) - want.as<float>()[i];
    num += d * d, den += double(want.as<float>()[i]) * want.as<float>()[i];
  }
  const double err = std::sqrt(num / den);
  std::printf("mixed ops: relative L2 error %.4f\n", err);
  EXPECT_LE(err, 0.05);
}

// A Sigmoid on the host feeds a conv: the float reference cannot compute
// Sigmoid, so no calibration data reaches the conv's region. The backend hands
// the region back with a message, the partitioner gives it to the next backend
// (the host), no .xmodel is written, and the result is the float one.
TEST(VitisAiBackend, ARegionThatCannotBeQuantizedGoesToTheNextBackendWithAMessage) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 2, 5, 5});
  auto w = b.constant("w", random_f32({3, 2, 1, 1}, 4));
  b.output(b.op("Conv", {b.op("Sigmoid", {x}), w}));
  CompileOptions o = vitis_options();
  std::vector<std::string> lines;
  o.progress = [&](const std::string &l) { lines.push_back(l); };
  Session s(b.build(), "fallback", "", o);
  bool said = false;
  for (const auto &l : lines)
    said = said || (l.find("vitis_ai hands back 1 node(s)") != std::string::npos &&
                    l.find("no calibration data reaches") != std::string::npos);
  EXPECT_TRUE(said) << "expected a hand-back message in the compile progress";
  for (const auto &st : s.last_compile().plan.steps) EXPECT_NE(st.extern_call, "vitis_ai.region");
  int host_kernels = 0;
  for (const auto &st : s.last_compile().plan.steps) host_kernels += !st.kernel.empty();
  EXPECT_GE(host_kernels, 1) << "the host compiles the conv";
  TensorData in = random_f32({1, 2, 5, 5}, 9);
  const TensorData out = s.run({in})[0];
  for (int m = 0; m < 3; ++m)
    for (int p = 0; p < 25; ++p) {
      double acc = 0;
      for (int c = 0; c < 2; ++c)
        acc += 1.0 / (1.0 + std::exp(-in.as<float>()[c * 25 + p])) * random_f32({3, 2, 1, 1}, 4).as<float>()[m * 2 + c];
      EXPECT_NEAR(out.as<float>()[m * 25 + p], acc, 1e-5);
    }
}

}  // namespace
}  // namespace disco
