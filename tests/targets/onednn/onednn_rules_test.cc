// The oneDNN backend's support rules (targets/onednn/onednn_rules.h): which
// nodes they take as one unit, and what they leave to the host with a reason.
#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "targets/onednn/onednn_rules.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

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

TEST(OnednnRules, AUnitCarriesItsPostOpsAndOperandsToCompile) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 4});
  auto bias = b.constant("bias", tensor({3}));
  auto y = b.op("Add", {b.op("MatMul", {x, b.constant("w", tensor({4, 3}))}), bias});
  b.output(b.op("Relu", {y}));
  Partitioned p = partition_onednn(b.build());
  ASSERT_EQ(p.partition.regions.size(), 1u) << describe_partition(p.graph, p.partition);
  const Unit &unit = p.partition.regions[0].units.at(0);
  ASSERT_EQ(unit.nodes.size(), 3u);
  const OnednnUnit &u = unit.payload_as<OnednnUnit>();
  EXPECT_EQ(u.nodes, unit.nodes);
  EXPECT_EQ(post_ops_to_string(u.post_ops), "add,relu:0");
  EXPECT_EQ(u.operands, std::vector<int>{p.graph.find_value("bias")});
  EXPECT_EQ(u.output, p.graph.outputs[0]);
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

// The post-ops of each oneDNN unit, in the order of their anchors.
std::vector<std::string> unit_post_ops(const Partitioned &p) {
  std::vector<std::string> r;
  for (const auto &region : p.partition.regions)
    if (region.backend == "onednn")
      for (const Unit &unit : region.units) r.push_back(post_ops_to_string(unit.payload_as<OnednnUnit>().post_ops));
  return r;
}

TEST(OnednnRules, SiluHardSwishAndHardSigmoidAfterConvolutionsArePostOps) {
  // SiLU as PyTorch exports it, Mul(c, Sigmoid(c)) in both operand orders,
  // then opset 14's HardSwish and a HardSigmoid of other parameters: each
  // convolution's unit takes its activation and nothing is left to the host.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 8, sym("h"), sym("w")});
  auto conv = [&](const std::string &in, const char *name) {
    return b.op("Conv", {in, b.constant(name, tensor({8, 8, 1, 1}))});
  };
  auto c1 = conv(x, "w1");
  auto s1 = b.op("Mul", {c1, b.op("Sigmoid", {c1})});
  auto c2 = conv(s1, "w2");
  auto s2 = b.op("Mul", {b.op("Sigmoid", {c2}), c2});
  auto h = b.op("HardSwish", {conv(s2, "w3")});
  b.output(b.op("HardSigmoid", {conv(h, "w4")}, testing::attrs({{"alpha", attr_float(0.25f)}, {"beta", attr_float(0.375f)}})));
  Partitioned p = partition_onednn(b.build());
  const std::string text = describe_partition(p.graph, p.partition);
  for (const char *op : {"Sigmoid", "Mul", "HardSwish", "HardSigmoid"})
    for (int nth = 0; nth < (std::string(op) == "Sigmoid" || std::string(op) == "Mul" ? 2 : 1); ++nth)
      EXPECT_EQ(p.backend_of(op, nth), "onednn") << op << " " << nth << "\n" << text;
  EXPECT_EQ(unit_post_ops(p), (std::vector<std::string>{"swish:1", "swish:1", "hardswish", "linear:0.25:0.375,clip:0:1"}))
      << text;
}

TEST(OnednnRules, ASiluWhoseSigmoidHasAnotherReaderStaysOnTheHost) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 4});
  auto y = b.op("MatMul", {x, b.constant("w", tensor({4, 3}))});
  auto s = b.op("Sigmoid", {y});
  b.output(b.op("Mul", {y, s}));
  b.output(s);  // the gate is read outside the pattern
  Partitioned p = partition_onednn(b.build());
  EXPECT_EQ(p.backend_of("MatMul"), "onednn");
  EXPECT_EQ(p.backend_of("Sigmoid"), "host");
  EXPECT_EQ(p.backend_of("Mul"), "host");
}

TEST(OnednnRules, AMulBySigmoidOfAnotherValueIsNotSilu) {
  // Mul(c, Sigmoid(d)) with c and d different: a gate, not an activation.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 4});
  auto c = b.op("MatMul", {x, b.constant("w", tensor({4, 3}))});
  auto d = b.op("Relu", {c});
  b.output(b.op("Mul", {c, b.op("Sigmoid", {d})}));
  b.output(d);
  Partitioned p = partition_onednn(b.build());
  EXPECT_EQ(p.backend_of("MatMul"), "onednn");
  EXPECT_EQ(unit_post_ops(p), std::vector<std::string>{""}) << describe_partition(p.graph, p.partition);
}

}  // namespace
}  // namespace disco
