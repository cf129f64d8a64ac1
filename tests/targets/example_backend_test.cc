// The example backend (targets/example/): which nodes its rules take and why
// they decline the rest, regions below its minimum going back to the host, its
// conv kernel against a scalar conv written here, and convnet run through it
// against PyTorch's outputs.
#include "driver/backend_registry.h"
#include "targets/example/example_backend.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "runtime/executor.h"
#include "runtime/extern_kernel.h"
#include "runtime/npy.h"
#include "driver/compile_model.h"
#include "targets/partitioner.h"
#include "tests/support/partitioned.h"
#include "tests/support/jit_eval.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"
#include "tests/support/plan_steps.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // f32, ramp, sym, count_steps, expect_close

// ---- helpers ----------------------------------------------------------------

using testing::Partitioned;

Partitioned partition_for_example(Graph g, const PartitionOptions &opts = {}) {
  return testing::partition_for(std::move(g), {"example", "host"}, opts);
}

CompileOptions example_options() {
  CompileOptions o;
  o.backends = {"example", "host"};
  o.use_cache = false;
  return o;
}

// Conv geometry for the scalar reference.
struct ConvGeometry {
  std::vector<int64_t> strides{1, 1}, pads{0, 0, 0, 0}, dilations{1, 1};
};

// A scalar 2-D conv written independently of the kernel: it pads X into a
// zero-filled copy first, then slides the dilated window over the copy.
TensorData reference_conv(const TensorData &x, const TensorData &w, const TensorData *b, const ConvGeometry &geo,
                          bool relu) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t M = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  const int64_t PH = H + geo.pads[0] + geo.pads[2], PW = W + geo.pads[1] + geo.pads[3];
  std::vector<float> padded(N * C * PH * PW, 0.0f);
  for (int64_t i = 0; i < N * C; ++i)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t v = 0; v < W; ++v)
        padded[(i * PH + h + geo.pads[0]) * PW + v + geo.pads[1]] = x.as<float>()[(i * H + h) * W + v];
  const int64_t OH = (PH - geo.dilations[0] * (KH - 1) - 1) / geo.strides[0] + 1;
  const int64_t OW = (PW - geo.dilations[1] * (KW - 1) - 1) / geo.strides[1] + 1;
  TensorData y(DType::F32, {N, M, OH, OW});
  float *out = y.mutable_as<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double sum = b ? b->as<float>()[m] : 0.0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw)
                sum += double(padded[((n * C + c) * PH + oh * geo.strides[0] + kh * geo.dilations[0]) * PW +
                                     ow * geo.strides[1] + kw * geo.dilations[1]]) *
                       w.as<float>()[((m * C + c) * KH + kh) * KW + kw];
          out[((n * M + m) * OH + oh) * OW + ow] = static_cast<float>(relu && sum < 0 ? 0.0 : sum);
        }
  return y;
}

// X [n, C, h, w] -> Conv (constant W, B) -> Relu, with the given attributes.
Graph conv_relu_graph(int64_t channels, std::vector<int64_t> w_shape, Attributes attrs, bool constant_w = true) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), channels, sym("h"), sym("w")});
  const int64_t m = w_shape[0];
  auto w = constant_w ? b.constant("weights", f32(w_shape, 0.125f, 1))
                      : b.input("weights", DType::F32, Shape(w_shape.begin(), w_shape.end()));
  auto bias = b.constant("bias", f32({m}, 0.5f, 3));
  b.output(b.op("Relu", {b.op("Conv", {x, w, bias}, std::move(attrs))}));
  return b.build();
}

// ---- (a) convnet --------------------------------------------------------------

TEST(ExampleBackend, TakesEveryConvOfConvnetThatItsRulesAccept) {
  const std::string path = testing::find_model("convnet");
  if (path.empty()) GTEST_SKIP() << "convnet.onnx is neither in ../shared/models nor in examples/models";
  Partitioned p = partition_for_example(load_model_source(path).graph);
  int convs = 0;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].op_type != "Conv") continue;
    const auto &acc = p.partition.accepted_by[n];
    if (std::find(acc.begin(), acc.end(), "example") == acc.end()) continue;
    ++convs;
    EXPECT_EQ(p.partition.regions.at(p.partition.region_of[n]).backend, "example") << p.graph.nodes[n].name;
  }
  EXPECT_EQ(convs, 9) << "convnet's nine convs are 3x3 or 1x1, float32, group 1\n" << p.notes();
}

TEST(ExampleBackend, RunsConvnetAndMatchesPyTorchAtThreeShapes) {
  const std::string path = testing::find_model("convnet");
  if (path.empty()) GTEST_SKIP() << "convnet.onnx is neither in ../shared/models nor in examples/models";
  CompiledModel m = compile_onnx(path, example_options());
  EXPECT_EQ(count_steps(m.plan, "example.conv"), 9);
  EXPECT_EQ(count_steps(m.plan, "example.add"), 3);
  install_backend_runtimes();
  Executor exec(m.plan, m.dir);
  for (int k = 1; k <= 3; ++k) {
    const std::string base = testing::references_dir() + "/convnet." + std::to_string(k);
    auto out = exec.run({read_npy(base + ".input.npy")});
    expect_close(out[0], read_npy(base + ".output.npy"), "convnet at shape set " + std::to_string(k));
  }
}

// ---- (b) declines ---------------------------------------------------------------

TEST(ExampleBackend, TakesAConvWithItsRelu) {
  Partitioned p = partition_for_example(conv_relu_graph(2, {4, 2, 3, 3}, {}));
  EXPECT_EQ(p.backend_of("Conv"), "example") << p.notes();
  EXPECT_EQ(p.backend_of("Relu"), "example");
  ASSERT_EQ(p.partition.regions.size(), 1u);
  EXPECT_EQ(p.partition.regions[0].units.at(0).nodes.size(), 2u) << "the Relu is fused into the conv's unit";
}

using Decline = testing::DeclineCase;

TEST(ExampleBackend, DeclinesWhatItCannotRunAndTheHostTakesIt) {
  std::vector<Decline> cases;
  cases.push_back({"9x9 kernel", conv_relu_graph(2, {4, 2, 9, 9}, {}), "Conv", "kernel larger than 7x7"});
  cases.push_back({"7x8 kernel", conv_relu_graph(2, {4, 2, 7, 8}, {}), "Conv", "kernel larger than 7x7"});
  cases.push_back({"grouped", conv_relu_graph(4, {4, 2, 3, 3}, {{"group", attr_int(2)}}), "Conv", "group != 1"});
  cases.push_back(
      {"weights as input", conv_relu_graph(2, {4, 2, 3, 3}, {}, false), "Conv", "weights are not a constant"});
  cases.push_back({"SAME_UPPER", conv_relu_graph(2, {4, 2, 3, 3}, {{"auto_pad", attr_string("SAME_UPPER")}}), "Conv",
                   "auto_pad SAME_UPPER"});
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 2, sym("l")});
    b.output(b.op("Relu", {b.op("Conv", {x, b.constant("w", f32({4, 2, 3}, 0.25f, 0))})}));
    cases.push_back({"1-D conv", b.build(), "Conv", "not a 2-D conv (X has rank 3)"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F64, {sym("n"), 2, sym("h"), sym("w")});
    TensorData w(DType::F64, {4, 2, 3, 3});
    b.output(b.op("Relu", {b.op("Conv", {x, b.constant("w", w)})}));
    cases.push_back({"float64 conv", b.build(), "Conv", "X is float64, not float32"});
  }
  {
    GraphBuilder b;  // [n, 4] + [m, 4]: equal only if n == m at run time, or broadcast
    auto x = b.input("x", DType::F32, {sym("n"), 4});
    auto y = b.input("y", DType::F32, {sym("m"), 4});
    b.output(b.op("Relu", {b.op("Add", {x, y})}));
    cases.push_back({"symbols that may differ", b.build(), "Add", "shapes may differ"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4});
    b.output(b.op("Relu", {b.op("Add", {x, b.constant("row", f32({4}, 1.0f, 0))})}));
    cases.push_back({"broadcast", b.build(), "Add", "shapes may differ"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::I32, {sym("n"), 4});
    b.output(b.op("Add", {x, x}));
    cases.push_back({"int32 add", b.build(), "Add", "input is int32, not float32"});
  }
  for (auto &c : cases) {
    Partitioned p = partition_for_example(std::move(c.graph));
    EXPECT_EQ(p.backend_of(c.op), "host") << c.what;
    EXPECT_TRUE(p.has_note(std::string("example declines ") + c.op + "_0 (" + c.op + "): " + c.reason))
        << c.what << ": expected the reason '" << c.reason << "', notes:\n"
        << p.notes();
  }
}

// ---- (c) the conv kernel ----------------------------------------------------------

struct ConvCase {
  std::vector<int64_t> x_shape, w_shape;
  ConvGeometry geo;
  bool bias, relu;
};

std::vector<ConvCase> conv_cases() {
  return {
      {{1, 1, 5, 5}, {1, 1, 3, 3}, {}, false, false},
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, true, true},
      {{1, 2, 9, 8}, {3, 2, 3, 2}, {{2, 3}, {0, 0, 0, 0}, {1, 1}}, true, false},
      {{1, 2, 8, 9}, {2, 2, 3, 3}, {{1, 1}, {2, 1, 0, 3}, {1, 1}}, false, true},
      {{2, 2, 10, 11}, {3, 2, 3, 3}, {{1, 2}, {1, 0, 2, 1}, {2, 3}}, true, false},
      {{1, 3, 12, 12}, {2, 3, 7, 7}, {{3, 2}, {3, 3, 3, 3}, {1, 2}}, true, true},
      {{1, 1, 4, 4}, {2, 1, 1, 1}, {{2, 2}, {0, 0, 0, 0}, {1, 1}}, true, false},
      {{1, 2, 3, 3}, {2, 2, 2, 2}, {{1, 1}, {4, 4, 4, 4}, {3, 3}}, false, false},  // mostly padding
  };
}

TEST(ExampleBackend, ConvKernelMatchesAScalarConvForStridesPadsAndDilations) {
  install_example_runtime();
  const ExternKernelFactory *make = ExternKernelRegistry::global().find("example.conv");
  ASSERT_NE(make, nullptr);
  int index = 0;
  for (const ConvCase &c : conv_cases()) {
    const std::string what = "case " + std::to_string(index++);
    TensorData x = f32(c.x_shape, 0.25f, 0), w = f32(c.w_shape, 0.125f, 5), b = f32({c.w_shape[0]}, 0.5f, 2);
    TensorData want = reference_conv(x, w, c.bias ? &b : nullptr, c.geo, c.relu);
    TensorData got(DType::F32, want.shape);
    PlanStep step;
    step.extern_call = "example.conv";
    step.label = "Conv_" + what;
    step.params = {{"strides", join_ints(c.geo.strides)},
                   {"pads", join_ints(c.geo.pads)},
                   {"dilations", join_ints(c.geo.dilations)},
                   {"relu", c.relu ? "1" : "0"}};
    auto kernel = (*make)(step);
    std::vector<ExternTensor> ins{{x.mutable_data(), DType::F32, x.shape, false},
                                  {w.mutable_data(), DType::F32, w.shape, true},
                                  {c.bias ? b.mutable_data() : nullptr, DType::F32, b.shape, true}};
    std::vector<ExternTensor> outs{{got.mutable_data(), DType::F32, got.shape, false}};
    kernel->run(ExternCall{ins, outs, SymbolValues{}});
    expect_close(got, want, what);
  }
}

TEST(ExampleBackend, ConvKernelRejectsAnOutputShapeItsGeometryDoesNotGive) {
  install_example_runtime();
  PlanStep step;
  step.extern_call = "example.conv";
  step.label = "Conv_7";
  step.params = {{"strides", "2,2"}, {"pads", "0,0,0,0"}, {"dilations", "1,1"}, {"relu", "0"}};
  auto kernel = (*ExternKernelRegistry::global().find("example.conv"))(step);
  TensorData x = f32({1, 1, 5, 5}, 1.0f, 0), w = f32({1, 1, 3, 3}, 1.0f, 0), y(DType::F32, {1, 1, 3, 3});
  std::vector<ExternTensor> ins{{x.mutable_data(), DType::F32, x.shape}, {w.mutable_data(), DType::F32, w.shape}};
  std::vector<ExternTensor> outs{{y.mutable_data(), DType::F32, y.shape}};
  testing::expect_error_naming(
      [&] {
        kernel->run(ExternCall{ins, outs, SymbolValues{}});
      },
      "Conv_7", "the geometry gives [1,1,2,2]");
  step.params["strides"] = "2";
  testing::expect_error_naming([&] { (*ExternKernelRegistry::global().find("example.conv"))(step); }, "Conv_7",
                               "2 strides");
}

// The whole path: rules, compile() and the kernel, one compile at two shapes.
TEST(ExampleBackend, CompiledConvReluMatchesAScalarConvAtTwoShapes) {
  ConvGeometry geo{{2, 1}, {1, 2, 0, 1}, {1, 2}};
  Attributes attrs{
      {"strides", attr_ints(geo.strides)}, {"pads", attr_ints(geo.pads)}, {"dilations", attr_ints(geo.dilations)}};
  CompiledModel m = compile_graph(conv_relu_graph(3, {4, 3, 3, 3}, attrs), "example_conv", "", example_options());
  ASSERT_EQ(count_steps(m.plan, "example.conv"), 1);
  install_backend_runtimes();
  Executor exec(m.plan, m.dir);
  const TensorData w = f32({4, 3, 3, 3}, 0.125f, 1), b = f32({4}, 0.5f, 3);
  for (auto shape : {std::vector<int64_t>{1, 3, 6, 7}, std::vector<int64_t>{2, 3, 11, 5}}) {
    TensorData x = f32(shape, 0.25f, 4);
    expect_close(exec.run({x})[0], reference_conv(x, w, &b, geo, true), "x " + join_ints(shape));
  }
}

TEST(ExampleBackend, CompiledAddReluMatchesAtTwoShapes) {
  GraphBuilder gb;
  auto x = gb.input("x", DType::F32, {sym("n"), 5});
  auto y = gb.input("y", DType::F32, {sym("n"), 5});
  gb.output(gb.op("Relu", {gb.op("Add", {x, y})}));
  CompiledModel m = compile_graph(gb.build(), "example_add", "", example_options());
  ASSERT_EQ(count_steps(m.plan, "example.add"), 1);
  install_backend_runtimes();
  Executor exec(m.plan, m.dir);
  for (int64_t rows : {1, 3}) {
    TensorData a = f32({rows, 5}, 0.5f, 0), c = f32({rows, 5}, 0.25f, 7);
    TensorData got = exec.run({a, c})[0];
    ASSERT_EQ(got.shape, a.shape);
    for (int64_t i = 0; i < a.num_elements(); ++i)
      EXPECT_FLOAT_EQ(got.as<float>()[i], std::max(0.0f, a.as<float>()[i] + c.as<float>()[i])) << i;
  }
}

// ---- (d) minimum region size ------------------------------------------------------

Graph lone_add_graph() {
  GraphBuilder b;  // Add alone (no Relu to fuse), then a Mul the example backend does not take
  auto x = b.input("x", DType::F32, {sym("n"), 4});
  auto y = b.input("y", DType::F32, {sym("n"), 4});
  auto s = b.op("Add", {x, y});
  b.output(b.op("Mul", {s, s}));
  return b.build();
}

TEST(ExampleBackend, DropsARegionBelowItsMinimumToTheHost) {
  Partitioned p = partition_for_example(lone_add_graph());
  EXPECT_EQ(p.backend_of("Add"), "host");
  EXPECT_TRUE(p.has_note("example region {Add_0} has 1 node(s), under its minimum of 2: given to the next backend"))
      << p.notes();
  for (const Region &r : p.partition.regions) EXPECT_EQ(r.backend, "host");
}

TEST(ExampleBackend, KeepsTheSameAddWhenTheMinimumIsLowered) {
  PartitionOptions opts;
  opts.min_region_nodes["example"] = 1;
  Partitioned p = partition_for_example(lone_add_graph(), opts);
  EXPECT_EQ(p.backend_of("Add"), "example") << p.notes();
  EXPECT_EQ(p.backend_of("Mul"), "host");
}

}  // namespace
}  // namespace disco
