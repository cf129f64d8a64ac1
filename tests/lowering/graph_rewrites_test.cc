// Graph rewrites (lowering/graph_rewrites.h): which patterns fold, which must
// not, and that a compiled model with folded nodes still matches a scalar
// reference of the original graph.
#include "lowering/graph_rewrites.h"

#include <gtest/gtest.h>

#include <cmath>

#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "driver/session.h"
#include "tests/support/jit_eval.h"
#include "tests/support/layernorm_softmax_reference.h"
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
  auto ln = b.op("LayerNormalization", {x, b.constant("gamma", f32({kChannels}, k.gamma)),
                                        b.constant("beta", f32({kChannels}, k.beta))});
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
  for (const std::vector<int64_t> &shape : {std::vector<int64_t>{2, 3, kChannels}, std::vector<int64_t>{1, 5, kChannels}}) {
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

}  // namespace
}  // namespace disco
