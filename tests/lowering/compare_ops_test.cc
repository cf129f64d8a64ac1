// Numeric tests of Where, the comparisons and the logical ops
// (lowering/ops/compare_ops.cc). Each graph runs through inference, lowering
// and Halide's JIT, and is compared with values worked out by hand from the
// ONNX operator spec. Inputs use symbolic dims wherever the op allows.
#include <gtest/gtest.h>

#include <limits>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim n = Dim::symbol("n");

// ---- Where, comparisons, logical --------------------------------------------

TEST(CompareOps, WhereBroadcastsItsThreeInputs) {
  GraphBuilder b(13);
  auto c = b.input("c", DType::Bool, {n, 1});
  auto x = b.input("x", DType::F32, {n, 3});
  auto y = b.input("y", DType::F32, {});
  b.output(b.op("Where", {c, x, y}));
  auto out = testing::jit_eval(b.build(), {boolean({2, 1}, {1, 0}), f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({}, {-1})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, -1, -1, -1}));
}

TEST(CompareOps, ComparisonsBroadcastAndGiveBools) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::I64, {n});
  auto y = b.input("y", DType::I64, {1});
  for (const char *op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) b.output(b.op(op, {x, y}));
  auto out = testing::jit_eval(b.build(), {i64({3}, {1, 2, 3}), i64({1}, {2})});
  EXPECT_EQ(out[0].dtype, DType::Bool);
  EXPECT_EQ(out[0].to_int64(), (Shape64{0, 1, 0}));
  EXPECT_EQ(out[1].to_int64(), (Shape64{1, 0, 0}));
  EXPECT_EQ(out[2].to_int64(), (Shape64{0, 0, 1}));
  EXPECT_EQ(out[3].to_int64(), (Shape64{1, 1, 0}));
  EXPECT_EQ(out[4].to_int64(), (Shape64{0, 1, 1}));
}

TEST(CompareOps, ComparisonsWithANanAreFalseAndANanCastsToTrue) {
  // IEEE's (and numpy's) answers, which Halide's no-NaNs float flags do not keep by themselves.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto y = b.input("y", DType::F32, {n});
  for (const char *op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) b.output(b.op(op, {x, y}));
  b.output(b.op("Cast", {x}, attrs({{"to", attr_int(9)}})));  // to bool
  // Negative NaNs too: x86 makes them (0 / 0 is 0xffc00000).
  auto out = testing::jit_eval(b.build(), {f32({6}, {nan, 1, nan, 2, -nan, 3}), f32({6}, {nan, nan, 1, 2, 3, -nan})});
  const Shape64 equal{0, 0, 0, 1, 0, 0}, unequal{0, 0, 0, 0, 0, 0};  // only 2 vs 2 has no NaN
  const std::vector<Shape64> want{equal, unequal, unequal, equal, equal};
  for (int k = 0; k < 5; ++k) EXPECT_EQ(out[k].to_int64(), want[k]) << "output " << k;
  EXPECT_EQ(out[5].to_int64(), (Shape64{1, 1, 1, 1, 1, 1}));
}

TEST(CompareOps, LogicalOpsFollowTheirTruthTables) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::Bool, {n});
  auto y = b.input("y", DType::Bool, {n});
  for (const char *op : {"And", "Or", "Xor"}) b.output(b.op(op, {x, y}));
  auto out = testing::jit_eval(b.build(), {boolean({4}, {0, 0, 1, 1}), boolean({4}, {0, 1, 0, 1})});
  EXPECT_EQ(out[0].to_int64(), (Shape64{0, 0, 0, 1}));
  EXPECT_EQ(out[1].to_int64(), (Shape64{0, 1, 1, 1}));
  EXPECT_EQ(out[2].to_int64(), (Shape64{0, 1, 1, 0}));
}

TEST(CompareOps, LegacyBroadcastAlignsBAtTheGivenAxis) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 3});
  auto y = b.input("y", DType::F32, {2});
  b.output(b.op("Greater", {x, y}, attrs({{"broadcast", attr_int(1)}, {"axis", attr_int(0)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 5})});
  // Row 0 compared with 1, row 1 with 5.
  EXPECT_EQ(out[0].to_int64(), (Shape64{0, 1, 1, 0, 0, 1}));
}

TEST(CompareOps, LogicalOpsRejectNonBoolInputs) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  b.output(b.op("And", {x, x}));
  testing::expect_run_error(b.build(), {iota_f32({2})}, "And_0", "must be bool");
}

}  // namespace
}  // namespace disco
