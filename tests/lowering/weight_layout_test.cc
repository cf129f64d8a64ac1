// Constant weights laid out at compile time (lowering/weight_layout.h): a
// Gemm's constant transB weight becomes its transpose, once per weight, and
// the Gemms still give the reference numbers; dot weights packed in panels
// land where the micro-kernel reads them, zero-padded, once per weight.
#include "lowering/weight_layout.h"

#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// y = x @ w^T and z = x @ w^T * 2 (both Gemm transB=1 on one constant w [3, 2]),
// and u = x @ v (transB=0, left alone).
Graph two_gemms() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 2});
  auto w = b.constant("w", f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  auto v = b.constant("v", f32({2, 3}, {1, 0, 1, 0, 1, 1}));
  b.output(b.op("Gemm", {x, w}, {{"transB", attr_int(1)}}));
  b.output(b.op("Gemm", {x, w}, {{"transB", attr_int(1)}, {"alpha", attr_float(2)}}));
  b.output(b.op("Gemm", {x, v}));
  return b.build();
}

TEST(WeightLayout, TransposesAConstantTransBWeightOnceForEveryGemmThatReadsIt) {
  Graph g = two_gemms();
  ASSERT_EQ(transpose_constant_weights(g), 1);
  const Node &first = g.nodes[g.nodes.size() - 3], &second = g.nodes[g.nodes.size() - 2];
  EXPECT_EQ(first.inputs[1], second.inputs[1]) << "one transposed copy for both Gemms";
  EXPECT_EQ(AttrReader(first.attrs, "").get_int("transB", 1), 0);
  const TensorData &t = *g.value(first.inputs[1]).constant;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<float>(t.as<float>(), t.as<float>() + 6), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  EXPECT_EQ(g.value(g.nodes.back().inputs[1]).name, "v") << "a transB=0 Gemm keeps its weight";
  EXPECT_EQ(transpose_constant_weights(g), 0) << "nothing is left to transpose";
}

TEST(WeightLayout, RewrittenGemmsGiveTheReferenceNumbers) {
  Graph g = two_gemms();
  transpose_constant_weights(g);
  auto out = jit_eval(std::move(g), {f32({2, 2}, {1, -1, 0.5f, 2})});
  // x @ w^T: rows [1,-1] -> [-1, -1, -1]; [0.5, 2] -> [4.5, 9.5, 14.5]
  EXPECT_EQ(std::vector<float>(out[0].as<float>(), out[0].as<float>() + 6),
            (std::vector<float>{-1, -1, -1, 4.5f, 9.5f, 14.5f}));
  EXPECT_EQ(std::vector<float>(out[1].as<float>(), out[1].as<float>() + 6),
            (std::vector<float>{-2, -2, -2, 9, 19, 29}));
  EXPECT_EQ(std::vector<float>(out[2].as<float>(), out[2].as<float>() + 6),
            (std::vector<float>{1, -1, 0, 0.5f, 2, 2.5f}));
}

TEST(WeightLayout, PanelsHoldEachColumnAtItsKRowZeroPadded) {
  // B [2, 5]: b(k, n) = 10 k + n; panels of 2 columns: [3][2][2].
  TensorData b = f32({2, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14});
  TensorData p = pack_panels(b, 2);
  EXPECT_EQ(p.shape, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(std::vector<float>(p.as<float>(), p.as<float>() + 12),
            (std::vector<float>{0, 1, 10, 11, 2, 3, 12, 13, 4, 0, 14, 0}));
}

TEST(WeightLayout, PacksConstantDotWeightsOncePerWidthAndOnlyThose) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("m"), 2});
  auto y = b.input("y", DType::F32, {2, 4});
  auto w = b.constant("w", f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  auto wt = b.constant("wt", f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.output(b.op("MatMul", {x, w}));
  b.output(b.op("Gemm", {x, w}));
  b.output(b.op("Gemm", {x, wt}, {{"transB", attr_int(1)}}));  // read transposed: left alone
  b.output(b.op("MatMul", {x, y}));                             // not a constant
  b.output(b.op("MatMul", {x, b.constant("odd", f32({2, 3}, {1, 2, 3, 4, 5, 6}))}));  // width 0
  Graph g = b.build();
  const int first = static_cast<int>(g.nodes.size()) - 5;
  std::vector<int> nodes;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) nodes.push_back(i);
  const std::vector<int> fresh = pack_dot_weights(g, nodes, [](int64_t n) { return n % 2 == 0 ? 2 : 0; });
  ASSERT_EQ(fresh.size(), 1u) << "one packed copy of w for the MatMul and the Gemm";
  EXPECT_EQ(g.nodes[first].inputs[1], fresh[0]);
  EXPECT_EQ(g.nodes[first + 1].inputs[1], fresh[0]);
  EXPECT_EQ(AttrReader(g.nodes[first].attrs, "").get_int(kPanelWidthAttr, 0), 2);
  EXPECT_EQ(g.value(fresh[0]).constant->shape, (std::vector<int64_t>{2, 2, 2}));
  for (int i = first + 2; i < first + 5; ++i)
    EXPECT_EQ(g.nodes[i].attrs.count(kPanelWidthAttr), 0u) << g.nodes[i].op_type << " " << i - first;
  // Packed weights give the reference numbers: x @ w with x = [[1, -1]].
  auto out = jit_eval(std::move(g), {f32({1, 2}, {1, -1}), f32({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0})});
  EXPECT_EQ(std::vector<float>(out[0].as<float>(), out[0].as<float>() + 4), (std::vector<float>{-4, -4, -4, -4}));
  EXPECT_EQ(std::vector<float>(out[1].as<float>(), out[1].as<float>() + 4), (std::vector<float>{-4, -4, -4, -4}));
}

TEST(WeightLayout, ChannelsLastConvWeightsKeepEachOutputChannelInnermost) {
  // W [2, 1, 1, 3]: w(m, 0, 0, k) = 10 m + k -> [1, 1, 3, 2].
  TensorData w = f32({2, 1, 1, 3}, {0, 1, 2, 10, 11, 12});
  TensorData t = channels_last(w);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 1, 3, 2}));
  EXPECT_EQ(std::vector<float>(t.as<float>(), t.as<float>() + 6), (std::vector<float>{0, 10, 1, 11, 2, 12}));

  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 1, 1, sym("w")});
  auto wv = b.constant("w", w);
  b.output(b.op("Conv", {x, wv}));
  b.output(b.op("Conv", {x, b.constant("g", f32({2, 1, 1, 3}, {0, 1, 2, 10, 11, 12}))}, {{"group", attr_int(1)}}));
  Graph g = b.build();
  std::vector<int> nodes{0, 1};
  EXPECT_TRUE(channels_last_conv_weights(g, nodes, [](int64_t m, int64_t) { return m > 2; }).empty()) << "too few channels";
  ASSERT_EQ(channels_last_conv_weights(g, nodes, [](int64_t m, int64_t) { return m == 2; }).size(), 2u);
  const Node &conv = g.nodes[0];
  EXPECT_EQ(AttrReader(conv.attrs, "").get_int(kChannelsLastWeightAttr, 0), 1);
  const Shape logical = conv_weight_shape(AttrReader(conv.attrs, ""), *g.value(conv.inputs[1]).shape);
  ASSERT_EQ(logical.size(), 4u);
  EXPECT_TRUE(logical[0].is_const(2) && logical[3].is_const(3)) << "W read as [M, C, kh, kw]";
  // The Conv still gives the reference numbers: x = [1, 2, 3, 4], taps 0,1,2 and 10,11,12.
  auto out = jit_eval(std::move(g), {f32({1, 1, 1, 4}, {1, 2, 3, 4})});
  EXPECT_EQ(std::vector<float>(out[0].as<float>(), out[0].as<float>() + 4), (std::vector<float>{8, 11, 68, 101}));
}

}  // namespace
}  // namespace disco
