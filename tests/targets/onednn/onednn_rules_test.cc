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

}  // namespace
}  // namespace disco
