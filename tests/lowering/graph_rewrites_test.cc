// Graph rewrites (lowering/graph_rewrites.h): which patterns fold, which must
// not, and that a compiled model with folded nodes still matches a scalar
// reference of the original graph (or PyTorch's outputs, for the GELUs that
// tests/references/make_gelu_references.py exports).
#include "lowering/graph_rewrites.h"

#include <gtest/gtest.h>

#include <cmath>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "frontend/onnx_importer.h"
#include "lowering/infer_context.h"
#include "runtime/npy.h"
#include "tests/support/jit_eval.h"
#include "tests/support/layernorm_softmax_reference.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

constexpr int64_t kChannels = 8;

std::vector<float> channel_ramp(float start, float step) {
  std::vector<float> v(kChannels);
  for (int64_t i = 0; i < kChannels; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// LayerNormalization -> Mul(c) -> Add(d) -> Softmax -> Relu, rows of kChannels.
struct Chain {
  std::vector<float> gamma = channel_ramp(0.5f, 0.25f), beta = channel_ramp(-1, 0.3f);
  std::vector<float> c = channel_ramp(2, -0.5f), d = channel_ramp(0.1f, 0.2f);
};

Graph chain_graph(const Chain &k) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("batch"), sym("seq"), kChannels});
  auto ln = b.op("LayerNormalization",
                 {x, b.constant("gamma", f32({kChannels}, k.gamma)), b.constant("beta", f32({kChannels}, k.beta))});
  auto m = b.op("Mul", {ln, b.constant("c", f32({kChannels}, k.c))});
  auto a = b.op("Add", {b.constant("d", f32({1, 1, kChannels}, k.d)), m});
  auto s = b.op("Softmax", {a});
  b.output(b.op("Relu", {s}));
  return b.build();
}

std::vector<float> chain_reference(const Chain &k, const std::vector<float> &x) {
  return layernorm_affine_softmax_reference(x, kChannels, k.gamma, k.beta, k.c, k.d);
}

std::vector<std::string> op_types(const Graph &g) {
  std::vector<std::string> ops;
  for (const auto &n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

int count_of(const Graph &g, const std::string &op) {
  int n = 0;
  for (const auto &node : g.nodes) n += node.op_type == op;
  return n;
}

Graph inferred(Graph g) {
  ShapeStore store;
  infer_shapes(g, store);
  return g;
}

TEST(GraphRewrites, FoldsConstantMulAndAddIntoLayerNormAndDropsReluAfterSoftmax) {
  Graph g = inferred(chain_graph(Chain{}));
  const std::string out_name = g.value(g.outputs[0]).name;
  EXPECT_EQ(rewrite_graph(g), 3);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"LayerNormalization", "Softmax"}));
  EXPECT_EQ(g.value(g.outputs[0]).name, out_name) << "the graph output keeps its name";
  EXPECT_EQ(g.value(g.outputs[0]).producer, 1);
  EXPECT_EQ(g.value(g.nodes[1].inputs[0]).producer, 0);
}

TEST(GraphRewrites, CompiledModelMatchesTheUnfoldedReferenceAtTwoShapes) {
  const Chain k;
  CompileOptions opts;
  opts.use_cache = false;
  opts.backends = {"host"};
  Session s(chain_graph(k), "rewrites", "", opts);
  for (const std::vector<int64_t> &shape :
       {std::vector<int64_t>{2, 3, kChannels}, std::vector<int64_t>{1, 5, kChannels}}) {
    std::vector<float> x(static_cast<size_t>(numel(shape)));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * 3;
    auto out = s.run({f32(shape, x)});
    EXPECT_LE(closeness(out[0], f32(shape, chain_reference(k, x))), 1.0) << shape[0] << "x" << shape[1];
  }
}

TEST(GraphRewrites, LeavesMulWithAGraphInputAndLayerNormWhoseMeanIsRead) {
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), kChannels});
    auto c = b.input("c", DType::F32, {kChannels});
    auto ln = b.op("LayerNormalization", {x, b.constant("gamma", f32({kChannels}, channel_ramp(1, 0)))});
    b.output(b.op("Mul", {ln, c}));
    Graph g = inferred(b.build());
    EXPECT_EQ(rewrite_graph(g), 0) << "a Mul by a graph input is not a constant";
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), kChannels});
    auto outs = b.op_n("LayerNormalization", {x, b.constant("gamma", f32({kChannels}, channel_ramp(1, 0)))}, 2);
    b.output(b.op("Mul", {outs[0], b.constant("c", f32({kChannels}, channel_ramp(2, 0)))}));
    b.output(outs[1]);
    Graph g = inferred(b.build());
    EXPECT_EQ(rewrite_graph(g), 0) << "the Mean output is read, so the node must stay as it is";
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), kChannels});
    auto ln = b.op("LayerNormalization", {x, b.constant("gamma", f32({kChannels}, channel_ramp(1, 0)))});
    // Broadcasts along the rows, not the normalized axis.
    b.output(b.op("Mul", {ln, b.constant("c", f32({2, 1}, {2, 3}))}));
    Graph g = inferred(b.build());
    EXPECT_EQ(rewrite_graph(g), 0) << "a per-row constant is not a per-channel one";
  }
}

TEST(GraphRewrites, KeepsReluWhoseInputCanBeNegativeOrIsReadTwice) {
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), kChannels});
    b.output(b.op("Relu", {b.op("Tanh", {x})}));
    Graph g = inferred(b.build());
    EXPECT_EQ(rewrite_graph(g), 0);
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), kChannels});
    auto s = b.op("Sigmoid", {x});
    b.output(b.op("Relu", {s}));
    b.output(b.op("Neg", {s}));
    Graph g = inferred(b.build());
    EXPECT_EQ(rewrite_graph(g), 0) << "the Sigmoid's output has a second reader";
  }
}

// ---- pass-through nodes ------------------------------------------------------------

// x -> Tanh -> Dropout (its mask unread unless `read_mask`) -> Identity -> Neg.
Graph pass_through_graph(bool read_mask) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {sym("n"), kChannels});
  auto d = b.op_n("Dropout", {b.op("Tanh", {x})}, 2);
  b.output(b.op("Neg", {b.op("Identity", {d[0]})}));
  if (read_mask) b.output(b.op("Not", {d[1]}));
  return b.build();
}

TEST(GraphRewrites, DropsADropoutWhoseMaskIsUnreadAndAnIdentityAndStillMatches) {
  Graph g = inferred(pass_through_graph(false));
  EXPECT_EQ(drop_pass_through_nodes(g), 2);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Tanh", "Neg"}));
  CompileOptions opts;
  opts.use_cache = false;
  opts.backends = {"host"};
  Session s(pass_through_graph(false), "pass_through", "", opts);
  for (int64_t n : {1, 5}) {
    std::vector<float> xv(n * kChannels), want;
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.25f * static_cast<float>(i) - 3;
    for (float v : xv) want.push_back(-std::tanh(v));
    auto out = s.run({f32({n, kChannels}, xv)});
    EXPECT_LE(closeness(out[0], f32({n, kChannels}, want)), 1.0) << "n = " << n;
  }
}

TEST(GraphRewrites, KeepsADropoutWhoseMaskIsReadAndPassThroughsOfInputsOrSharedValues) {
  {
    Graph g = inferred(pass_through_graph(true));
    EXPECT_EQ(drop_pass_through_nodes(g), 1) << "the Identity goes, the Dropout whose mask is read stays";
    EXPECT_EQ(count_of(g, "Dropout"), 1);
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), kChannels});
    b.output(b.op("Neg", {b.op("Identity", {x})}));  // a graph input: no producer to write it
    auto t = b.op("Tanh", {x});
    b.output(b.op("Identity", {t}));
    b.output(b.op("Neg", {t}));  // the Tanh's output has a second reader
    Graph g = inferred(b.build());
    EXPECT_EQ(drop_pass_through_nodes(g), 0);
  }
}

// ---- GELU ----------------------------------------------------------------------

std::string gelu_model(const std::string &name) {
  return std::string(DISCO_SOURCE_DIR) + "/tests/references/gelu/" + name;
}

struct ExportedGelu {
  const char *name;
  const char *approximate;
};

class FoldsExportedGelu : public ::testing::TestWithParam<ExportedGelu> {};

TEST_P(FoldsExportedGelu, IntoOneGeluNodeThatMatchesPyTorch) {
  const ExportedGelu c = GetParam();
  Graph g = inferred(load_onnx_file(gelu_model(c.name) + ".onnx"));
  const int before = static_cast<int>(g.nodes.size());
  const int removed = rewrite_graph(g);
  EXPECT_EQ(count_of(g, "Gelu"), 1) << ::testing::PrintToString(op_types(g));
  EXPECT_EQ(count_of(g, "Erf") + count_of(g, "Tanh") + count_of(g, "Mul") + count_of(g, "Add") + count_of(g, "Div") +
                count_of(g, "Pow"),
            0)
      << ::testing::PrintToString(op_types(g));
  EXPECT_EQ(static_cast<int>(g.nodes.size()), before - removed);
  for (const auto &n : g.nodes)
    if (n.op_type == "Gelu") {
      EXPECT_EQ(AttrReader(n.attrs, n.where()).get_string("approximate", "none"), c.approximate);
      EXPECT_EQ(g.value(n.inputs[0]).name, "x");
      EXPECT_EQ(g.value(n.outputs[0]).name, "y");
    }
  CompileOptions opts;
  opts.use_cache = false;
  opts.backends = {"host"};
  Session s(load_onnx_file(gelu_model(c.name) + ".onnx"), std::string("gelu_") + c.name, "", opts);
  const TensorData x = read_npy(gelu_model(c.name) + ".input.npy");
  auto out = s.run({x});
  EXPECT_LE(closeness(out[0], read_npy(gelu_model(c.name) + ".output.npy"), 1e-5, 1e-6), 1.0);
}

INSTANTIATE_TEST_SUITE_P(PyTorchOpset17, FoldsExportedGelu,
                         ::testing::Values(ExportedGelu{"gelu_erf", "none"}, ExportedGelu{"gelu_tanh", "tanh"},
                                           ExportedGelu{"gelu_erf_half_first", "none"},
                                           ExportedGelu{"gelu_new_pow", "tanh"}),
                         [](const ::testing::TestParamInfo<ExportedGelu> &i) { return std::string(i.param.name); });

// 0.5 x (1 + erf(x / s)), as PyTorch exports it, with s and the values read
// from outside chosen per case.
Graph erf_gelu(float sqrt2, bool erf_is_output, bool half_as_div) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), kChannels});
  auto scalar = [&](const char *name, float v) { return b.constant(name, f32({}, {v})); };
  auto e = b.op("Erf", {b.op("Div", {x, scalar("s", sqrt2)})});
  auto p = b.op("Add", {e, scalar("one", 1)});
  auto xp = b.op("Mul", {x, p});
  b.output(half_as_div ? b.op("Div", {xp, scalar("two", 2)}) : b.op("Mul", {xp, scalar("half", 0.5f)}));
  if (erf_is_output) b.output(e);
  return b.build();
}

TEST(GraphRewrites, FoldsGeluWithDivByTwoButNotWithAnotherConstantOrAReadIntermediate) {
  {
    Graph g = inferred(erf_gelu(1.41421356f, false, true));
    EXPECT_EQ(rewrite_graph(g), 4);
    EXPECT_EQ(op_types(g), (std::vector<std::string>{"Gelu"}));
  }
  {
    Graph g = inferred(erf_gelu(1.5f, false, false));
    EXPECT_EQ(rewrite_graph(g), 0) << "x / 1.5 is no GELU";
  }
  {
    Graph g = inferred(erf_gelu(1.41421356f, true, false));
    EXPECT_EQ(rewrite_graph(g), 0) << "the Erf's output is read outside the pattern";
  }
}

// The folded erf-form Gelu after a Linear is a post-op of the oneDNN MatMul
// (targets/onednn/onednn_rules.cc reads Gelu nodes), as the unfolded pattern
// was, and the compiled model still matches PyTorch.
TEST(GraphRewrites, FoldedGeluAfterALinearStaysInTheOnednnRegion) {
  Graph g = inferred(load_onnx_file(gelu_model("linear_gelu") + ".onnx"));
  rewrite_graph(g);
  ASSERT_EQ(count_of(g, "Gelu"), 1);
  testing::Partitioned p = testing::partition_for(g, {"onednn", "host"});
  EXPECT_EQ(p.backend_of("Gelu"), "onednn") << p.notes();
  int gelu = -1, matmul = -1;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].op_type == "Gelu") gelu = p.partition.region_of[n];
    if (p.graph.nodes[n].op_type == "MatMul" || p.graph.nodes[n].op_type == "Gemm") matmul = p.partition.region_of[n];
  }
  EXPECT_EQ(gelu, matmul) << "the Gelu is the MatMul's epilogue\n" << p.notes();
  CompileOptions opts;
  opts.use_cache = false;
  opts.backends = {"onednn", "host"};
  Session s(load_onnx_file(gelu_model("linear_gelu") + ".onnx"), "linear_gelu", "", opts);
  auto out = s.run({read_npy(gelu_model("linear_gelu") + ".input.npy")});
  EXPECT_LE(closeness(out[0], read_npy(gelu_model("linear_gelu") + ".output.npy"), 1e-4, 1e-5), 1.0);
}

}  // namespace
}  // namespace disco

namespace disco {
namespace {

// x [n, c, h, w] -> Pad (spatial pads 1, 2 before and 2, 1 after, of `value`, `mode`) -> AveragePool 3x3
// stride 1 with `pool` attributes.
Graph pad_pool_graph(float value, const std::string &mode, Attributes pool, std::vector<int64_t> pads = {}) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 2, sym("h"), sym("w")});
  if (pads.empty()) pads = {0, 0, 1, 2, 0, 0, 2, 1};
  auto p = b.op("Pad", {x, b.constant("pads", TensorData::from_int64(pads, {8})), b.constant("v", f32({}, {value}))},
                attrs({{"mode", attr_string(mode)}}));
  pool["kernel_shape"] = attr_ints({3, 3});
  b.output(b.op("AveragePool", {p}, pool));
  return b.build();
}

TEST(GraphRewrites, FoldsAZeroPadIntoTheAveragePoolThatCountsIt) {
  Graph g = inferred(pad_pool_graph(0.0f, "constant", {}));
  EXPECT_EQ(fold_pad_into_average_pool(g), 1);
  EXPECT_EQ(op_types(g), std::vector<std::string>{"AveragePool"});
  CompileOptions opts;
  opts.use_cache = false;
  Session s(pad_pool_graph(0.0f, "constant", {}), "pad_pool", "", opts);
  for (const std::vector<int64_t> &shape : {std::vector<int64_t>{1, 2, 4, 5}, std::vector<int64_t>{2, 2, 7, 3}}) {
    const int64_t n = shape[0], h = shape[2], w = shape[3], oh = h + 3 - 2, ow = w + 3 - 2;
    std::vector<float> x(static_cast<size_t>(numel(shape)));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 2;
    // The zero-padded input averaged over full 3x3 windows.
    std::vector<float> want;
    for (int64_t b = 0; b < n * 2; ++b)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0;
          for (int64_t di = 0; di < 3; ++di)
            for (int64_t dj = 0; dj < 3; ++dj) {
              const int64_t y = i + di - 1, z = j + dj - 2;  // pads before: 1 on h, 2 on w
              if (y >= 0 && y < h && z >= 0 && z < w) sum += x[static_cast<size_t>((b * h + y) * w + z)];
            }
          want.push_back(static_cast<float>(sum / 9));
        }
    auto out = s.run({f32(shape, x)});
    EXPECT_LE(closeness(out[0], f32({n, 2, oh, ow}, want)), 1.0) << h << "x" << w;
  }
}

TEST(GraphRewrites, LeavesPadsThatAreNotCountedZerosOfTheSpatialDims) {
  Attributes include;
  include["count_include_pad"] = attr_int(1);
  include["pads"] = attr_ints({1, 1, 1, 1});
  Attributes exclude;
  exclude["pads"] = attr_ints({1, 1, 1, 1});  // the pool's own pads not counted: the sum would differ
  Attributes ceil;
  ceil["ceil_mode"] = attr_int(1);
  struct Case {
    const char *what;
    Graph g;
    int folds;
  };
  Case cases[] = {
      {"own pads counted too", pad_pool_graph(0.0f, "constant", include), 1},
      {"own pads not counted", pad_pool_graph(0.0f, "constant", exclude), 0},
      {"ceil_mode", pad_pool_graph(0.0f, "constant", ceil), 0},
      {"a pad of ones", pad_pool_graph(1.0f, "constant", {}), 0},
      {"reflect", pad_pool_graph(0.0f, "reflect", {}), 0},
      {"channel pads", pad_pool_graph(0.0f, "constant", {}, {0, 1, 1, 1, 0, 0, 1, 1}), 0},
  };
  for (Case &c : cases) {
    Graph g = inferred(std::move(c.g));
    EXPECT_EQ(fold_pad_into_average_pool(g), c.folds) << c.what;
    if (c.folds == 1) {
      const Node &pool = g.nodes.back();
      EXPECT_EQ(AttrReader(pool.attrs, pool.where()).get_ints("pads"), (std::vector<int64_t>{2, 3, 3, 2})) << c.what;
    }
  }
}

}  // namespace
}  // namespace disco
