// The fusion planner: group kinds and members on small graphs whose shapes
// are symbolic, so every decision has to come from the shape store.
#include "schedules/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// "kind: Op Op ..." per group, in kernel order.
std::vector<std::string> plan(Graph g) {
  ShapeStore store;
  infer_shapes(g, store);
  std::vector<std::string> out;
  for (const auto &gr : plan_fusion(g, store)) {
    std::string s = group_kind_name(gr.kind);
    s += ":";
    for (int n : gr.nodes) s += " " + g.nodes[n].op_type;
    out.push_back(s);
  }
  return out;
}

Shape bs8() { return {Dim::symbol("b"), Dim::symbol("s"), Dim(8)}; }

std::string layer_norm(GraphBuilder &b, const std::string &x, int64_t axis = -1) {
  auto scale = b.constant("scale" + x, f32({8}, ramp(8)));
  auto bias = b.constant("bias" + x, f32({8}, ramp(8, 0.5f, 3)));
  return b.op("LayerNormalization", {x, scale, bias}, {{"axis", attr_int(axis)}});
}

TEST(Fusion, ElementwiseOpsOfEqualShapesShareOneLoop) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto y = b.input("y", DType::F32, bs8());
  auto s = b.op("Add", {x, y});
  auto r = b.op("Relu", {s});
  b.output(b.op("Mul", {r, r}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"loop: Add Relu Mul"}));
}

// A chain of 150 elementwise ops would be one kernel; Halide's lowering time
// grows faster than its stages, so groups stop at 64 nodes (ssdlite's
// per-class postprocess was one kernel of hundreds, compiled for 20 minutes).
TEST(Fusion, AGroupStopsAtSixtyFourNodes) {
  GraphBuilder b;
  std::string v = b.input("x", DType::F32, bs8());
  for (int i = 0; i < 150; ++i) v = b.op(i % 2 ? "Relu" : "Neg", {v});
  b.output(v);
  std::vector<std::string> groups = plan(b.build());
  ASSERT_EQ(groups.size(), 3u);
  std::vector<size_t> sizes;
  for (const auto &gr : groups) sizes.push_back(std::count(gr.begin(), gr.end(), ' '));
  EXPECT_EQ(sizes, (std::vector<size_t>{22, 64, 64}));  // grown from the output back
}

TEST(Fusion, ABroadcastOperandIsNotRecomputedForEveryElement) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto v = b.input("v", DType::F32, {Dim(8)});
  auto e = b.op("Exp", {v});  // 8 elements, read b*s times by the Add
  b.output(b.op("Add", {x, e}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"loop: Exp", "loop: Add"}));
}

TEST(Fusion, ViewsJoinWhenTheStoreProvesTheElementCountsEqual) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto a = b.op("Sigmoid", {x});
  auto shape = b.constant("shape", i64({2}, {-1, 8}));
  auto flat = b.op("Reshape", {a, shape});  // [b*s, 8]
  b.output(b.op("Neg", {flat}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"loop: Sigmoid Reshape Neg"}));
}

TEST(Fusion, AReductionTakesTheElementwiseProducersOfItsData) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto two = b.constant("two", f32({}, {2}));
  auto m = b.op("Mul", {x, two});
  auto axes = b.constant("axes", i64({1}, {1}));
  b.output(b.op("ReduceSum", {m, axes}, {{"keepdims", attr_int(0)}}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"input: Mul ReduceSum"}));
}

TEST(Fusion, ABroadcastParameterOfAReductionStaysOutside) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto w = b.input("w", DType::F32, {Dim(8)});
  auto one = b.constant("one", f32({}, {1}));
  auto scale = b.op("Add", {w, one});
  b.output(b.op("LayerNormalization", {x, scale}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"loop: Add", "stitch: LayerNormalization"}));
}

TEST(Fusion, LayerNormThenSoftmaxWithTheirProducersAndConsumersIsOneStitchKernel) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto y = b.input("y", DType::F32, bs8());
  auto in = b.op("Sub", {x, y});
  auto ln = layer_norm(b, in);
  auto m = b.op("Mul", {ln, b.constant("k", f32({8}, ramp(8)))});
  auto a = b.op("Add", {m, b.constant("c", f32({8}, ramp(8, 0.1f)))});
  auto sm = b.op("Softmax", {a}, {{"axis", attr_int(-1)}});
  b.output(b.op("Relu", {sm}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"stitch: Sub LayerNormalization Mul Add Softmax Relu"}));
}

TEST(Fusion, ASoftmaxOverAnInnerAxisIsAnInputGroupAndStitchesNothing) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto e = b.op("Exp", {x});
  auto sm = b.op("Softmax", {e}, {{"axis", attr_int(1)}});
  b.output(b.op("Relu", {sm}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"input: Exp Softmax", "loop: Relu"}));
}

TEST(Fusion, AViewBetweenARowReductionAndItsConsumerEndsTheStitch) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto ln = layer_norm(b, x);
  auto t = b.op("Transpose", {ln}, {{"perm", attr_ints({0, 2, 1})}});
  b.output(b.op("Relu", {t}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"stitch: LayerNormalization", "loop: Transpose Relu"}));
}

TEST(Fusion, RowReductionsOverDifferentRowsAreSeparateKernels) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto scale = b.constant("scale", f32({1}, {2}));
  auto ln = b.op("LayerNormalization", {x, scale}, {{"axis", attr_int(1)}});  // rows of s*8
  b.output(b.op("Softmax", {ln}, {{"axis", attr_int(-1)}}));                  // rows of 8
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"stitch: LayerNormalization", "stitch: Softmax"}));
}

TEST(Fusion, AConsumerOfAnotherShapeEndsTheStitch) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("s"), Dim(8)});
  auto big = b.input("big", DType::F32, {Dim::symbol("b"), Dim::symbol("s"), Dim(8)});
  auto sm = b.op("Softmax", {x}, {{"axis", attr_int(-1)}});
  b.output(b.op("Add", {big, sm}));  // broadcasts the softmax over b
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"stitch: Softmax", "loop: Add"}));
}

TEST(Fusion, ADotTakesItsEpilogueAndTheViewsItReads) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto w = b.input("w", DType::F32, {Dim(8), Dim(8)});
  auto wt = b.op("Transpose", {w}, {{"perm", attr_ints({1, 0})}});
  auto y = b.op("MatMul", {x, wt});
  auto a = b.op("Add", {y, b.constant("bias", f32({8}, ramp(8)))});
  b.output(b.op("Relu", {a}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"dot: Transpose MatMul Add Relu"}));
}

TEST(Fusion, ElementwiseOperandsOfADotAreComputedOnce) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto w = b.input("w", DType::F32, {Dim(8), Dim(8)});
  auto e = b.op("Exp", {w});
  auto t = b.op("Transpose", {e}, {{"perm", attr_ints({1, 0})}});
  b.output(b.op("MatMul", {x, t}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"loop: Exp", "dot: Transpose MatMul"}));
}

TEST(Fusion, AProducerReadTwiceInsideOneGroupJoinsIt) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto a = b.op("Sigmoid", {x});
  auto e = b.op("Exp", {a});
  auto r = b.op("Relu", {a});
  b.output(b.op("Add", {e, r}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"loop: Sigmoid Exp Relu Add"}));
}

TEST(Fusion, AValueThatIsAlsoAGraphOutputEndsItsGroup) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bs8());
  auto a = b.op("Sigmoid", {x});
  b.output(a);
  b.output(b.op("Relu", {a}));
  EXPECT_EQ(plan(b.build()), (std::vector<std::string>{"loop: Sigmoid", "loop: Relu"}));
}

TEST(Fusion, RowReductionAxisFollowsTheOpset) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, bs8());
  auto coerced = b.op("Softmax", {x});  // opset 11: axis 1, rows of s*8
  b.output(coerced);
  Graph g = b.build();
  EXPECT_EQ(row_reduction_axis(g, g.nodes[0]), 1);
  GraphBuilder b13(13);
  auto y = b13.input("y", DType::F32, bs8());
  b13.output(b13.op("Softmax", {y}, {{"axis", attr_int(1)}}));  // opset 13: axis 1 alone, not a row
  Graph g13 = b13.build();
  EXPECT_EQ(row_reduction_axis(g13, g13.nodes[0]), -1);
}

}  // namespace
}  // namespace disco
