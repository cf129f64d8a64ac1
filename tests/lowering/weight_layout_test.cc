// Constant weights laid out at compile time (lowering/weight_layout.h): a
// Gemm's constant transB weight becomes its transpose, once per weight, and
// the Gemms still give the reference numbers.
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

}  // namespace
}  // namespace disco
