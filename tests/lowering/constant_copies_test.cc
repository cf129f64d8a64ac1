// Constant folding by copying (lowering/constant_copies.h): Transpose, Slice,
// Concat and Expand of constants, folded during shape inference, give the
// values that plain loops written here give, and fold_by_copy itself (not
// the JIT path it replaces) makes them; forms it leaves alone return nothing.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "frontend/graph_builder.h"
#include "lowering/constant_copies.h"
#include "lowering/infer_context.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers
using Dims = std::vector<int64_t>;

TensorData iota(const Dims &shape, int64_t from = 0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return TensorData::from_int64(v, shape);
}

// Builds `build(b)`'s graph, infers its shapes (which folds the node), and
// checks the output constant and fold_by_copy's own result against `want`.
template <class Build>
void expect_folded(Build build, const Dims &want_shape, const std::vector<int64_t> &want, int opset = 17) {
  GraphBuilder b(opset);
  b.output(build(b));
  Graph g = b.build();
  ShapeStore store;
  infer_shapes(g, store);
  const Value &out = g.value(g.outputs[0]);
  ASSERT_TRUE(out.constant) << "the node was not folded";
  EXPECT_EQ(out.constant->shape, want_shape);
  EXPECT_EQ(out.constant->to_int64(), want);
  const Node *node = nullptr;
  for (const auto &n : g.nodes)
    if (!n.outputs.empty() && n.outputs[0] == g.outputs[0]) node = &n;
  ASSERT_TRUE(node);
  auto copied = fold_by_copy(g, *node, store);
  ASSERT_TRUE(copied) << node->op_type << " was not folded by a copy";
  EXPECT_EQ(copied->shape, want_shape);
  EXPECT_EQ(copied->to_int64(), want);
}

TEST(ConstantCopies, TransposeMovesEachElementToItsPermutedIndex) {
  const Dims in{2, 3, 4}, perm{2, 0, 1};
  std::vector<int64_t> want;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) want.push_back((i * 3 + j) * 4 + k);
  expect_folded(
      [&](GraphBuilder &b) {
        return b.op("Transpose", {b.constant("c", iota(in))}, attrs({{"perm", attr_ints(perm)}}));
      },
      {4, 2, 3}, want);
  // No perm: the dims reversed.
  std::vector<int64_t> rev;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t i = 0; i < 2; ++i) rev.push_back((i * 3 + j) * 4 + k);
  expect_folded([&](GraphBuilder &b) { return b.op("Transpose", {b.constant("c", iota(in))}); }, {4, 3, 2}, rev);
}

TEST(ConstantCopies, SliceTakesNegativeStartsClampedEndsAndNegativeSteps) {
  // [4, 5]: rows -3.. (1, 2, 3), columns 4 down to 1 by -2 (4, 2).
  std::vector<int64_t> want;
  for (int64_t r : {1, 2, 3})
    for (int64_t c : {4, 2}) want.push_back(r * 5 + c);
  expect_folded(
      [&](GraphBuilder &b) {
        return b.op("Slice", {b.constant("c", iota({4, 5})), b.constant("s", TensorData::from_int64({-3, 4}, {2})),
                              b.constant("e", TensorData::from_int64({100, 0}, {2})),
                              b.constant("a", TensorData::from_int64({0, 1}, {2})),
                              b.constant("t", TensorData::from_int64({1, -2}, {2}))});
      },
      {3, 2}, want);
  // A negative step from past the end: the start clamps to the last element.
  expect_folded(
      [&](GraphBuilder &b) {
        return b.op("Slice", {b.constant("c", iota({4})), b.constant("s", TensorData::from_int64({10}, {1})),
                              b.constant("e", TensorData::from_int64({-100}, {1})),
                              b.constant("a", TensorData::from_int64({0}, {1})),
                              b.constant("t", TensorData::from_int64({-1}, {1}))});
      },
      {4}, {3, 2, 1, 0});
  // Axes and steps left out: the first axes, step 1.
  expect_folded(
      [&](GraphBuilder &b) {
        return b.op("Slice", {b.constant("c", iota({4, 5})), b.constant("s", TensorData::from_int64({2}, {1})),
                              b.constant("e", TensorData::from_int64({4}, {1}))});
      },
      {2, 5}, {10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
}

TEST(ConstantCopies, ConcatPutsEachInputsRunsInOrderAlongTheAxis) {
  // [2, 1] and [2, 3] along the last axis (given as -1).
  expect_folded(
      [&](GraphBuilder &b) {
        return b.op("Concat", {b.constant("a", iota({2, 1}, 100)), b.constant("b", iota({2, 3}))},
                    attrs({{"axis", attr_int(-1)}}));
      },
      {2, 4}, {100, 0, 1, 2, 101, 3, 4, 5});
}

TEST(ConstantCopies, ExpandBroadcastsFromTheRight) {
  // [3, 1] into [2, 3, 4]: each row's value repeated along the last axis, the whole again along the first.
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) want.push_back(j);
  expect_folded(
      [&](GraphBuilder &b) {
        return b.op("Expand", {b.constant("c", iota({3, 1})), b.constant("s", TensorData::from_int64({2, 1, 4}, {3}))});
      },
      {2, 3, 4}, want);
}

TEST(ConstantCopies, OtherOpsAndSliceBeforeOpset10AreLeftToTheJit) {
  GraphBuilder b(9);
  b.output(b.op("Slice", {b.constant("c", iota({4, 5}))},
                attrs({{"starts", attr_ints({1})}, {"ends", attr_ints({3})}, {"axes", attr_ints({0})}})));
  Graph g = b.build();
  ShapeStore store;
  infer_shapes(g, store);
  const Value &out = g.value(g.outputs[0]);
  ASSERT_TRUE(out.constant) << "folded through the JIT";
  EXPECT_EQ(out.constant->to_int64(), (std::vector<int64_t>{5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
  EXPECT_FALSE(fold_by_copy(g, g.nodes.back(), store));
}

}  // namespace
}  // namespace disco
