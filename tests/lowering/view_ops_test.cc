// Numeric tests of the view ops (lowering/ops/view_ops.cc): Unsqueeze,
// Squeeze, Reshape, Flatten, Transpose, Expand and Tile. Each graph runs
// through inference, lowering and Halide's JIT, and is compared with values
// worked out by hand from the ONNX operator spec. Inputs use symbolic dims
// wherever the op allows.
#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim n = Dim::symbol("n"), m = Dim::symbol("m");

// ---- Unsqueeze, Squeeze -----------------------------------------------------

TEST(ViewOps, UnsqueezeReadsAxesFromTheAttributeBeforeOpset13) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {n, 2});
  b.output(b.op("Unsqueeze", {x}, attrs({{"axes", attr_ints({0, -1})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 2, 2, 1}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ViewOps, UnsqueezeReadsAxesFromTheInputSinceOpset13) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto axes = b.constant("axes", i64({1}, {1}));
  b.output(b.op("Unsqueeze", {x, axes}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 1, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ViewOps, UnsqueezeWithRunTimeAxesFailsNamingTheNode) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto axes = b.input("axes", DType::I64, {1});
  b.output(b.op("Unsqueeze", {x, axes}));
  testing::expect_run_error(b.build(), {iota_f32({2, 2}), i64({1}, {0})}, "Unsqueeze_0", "known at compile time");
}

TEST(ViewOps, SqueezeRemovesTheGivenAxes) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {n, 1, 2});
  b.output(b.op("Squeeze", {x}, attrs({{"axes", attr_ints({-2})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 1, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ViewOps, SqueezeWithoutAxesRemovesEveryDimOfOne) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {1, 3, 1});
  b.output(b.op("Squeeze", {x}));
  auto out = testing::jit_eval(b.build(), {f32({1, 3, 1}, {7, 8, 9})});
  EXPECT_EQ(out[0].shape, (Shape64{3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{7, 8, 9}));
}

TEST(ViewOps, SqueezeOfADimThatIsNotOneFails) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {2, 3});
  auto axes = b.constant("axes", i64({1}, {0}));
  b.output(b.op("Squeeze", {x, axes}));
  testing::expect_run_error(b.build(), {iota_f32({2, 3})}, "Squeeze_0", "cannot squeeze dim 0 of extent 2");
}

// ---- Reshape, Flatten, Transpose --------------------------------------------

TEST(ViewOps, ReshapeToHeadsUsesShapeArithmeticFromTheInput) {
  // x.reshape(b, s, 2, 3) with b and s taken from x's Shape, then heads moved forward.
  GraphBuilder b(13);
  const Dim bs = Dim::symbol("b"), s = Dim::symbol("s");
  auto x = b.input("x", DType::F32, {bs, s, 6});
  auto shp = b.op("Shape", {x});
  auto zero = b.constant("zero", i64({1}, {0}));
  auto i0 = b.constant("i0", i64({}, {0}));
  auto i1 = b.constant("i1", i64({}, {1}));
  auto heads = b.constant("heads", i64({2}, {2, 3}));
  auto d0 = b.op("Unsqueeze", {b.op("Gather", {shp, i0}), zero});
  auto d1 = b.op("Unsqueeze", {b.op("Gather", {shp, i1}), zero});
  auto target = b.op("Concat", {d0, d1, heads}, attrs({{"axis", attr_int(0)}}));
  auto r = b.op("Reshape", {x, target});
  b.output(b.op("Transpose", {r}, attrs({{"perm", attr_ints({0, 2, 1, 3})}})));
  auto out = testing::jit_eval(b.build(), {iota_f32({1, 2, 6})});
  // r[0][t][h][d] = t*6 + h*3 + d; out[0][h][t][d] = r[0][t][h][d].
  EXPECT_EQ(out[0].shape, (Shape64{1, 2, 2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11}));
}

TEST(ViewOps, ReshapeWithZeroCopiesAndMinusOneInfers) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 6});
  auto target = b.constant("target", i64({3}, {0, -1, 2}));
  auto r = b.op("Reshape", {x, target});
  b.output(b.op("Transpose", {r}, attrs({{"perm", attr_ints({0, 2, 1})}})));
  auto out = testing::jit_eval(b.build(), {iota_f32({1, 6})});
  // r = [[[0,1],[2,3],[4,5]]], transposed to [[[0,2,4],[1,3,5]]].
  EXPECT_EQ(out[0].shape, (Shape64{1, 2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 2, 4, 1, 3, 5}));
}

TEST(ViewOps, ReshapeMergesSymbolicLeadingDims) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, m, 2});
  auto target = b.constant("target", i64({2}, {-1, 2}));
  auto r = b.op("Reshape", {x, target});
  // Transpose so the output layout shows the row order.
  b.output(b.op("Transpose", {r}));
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 3, 2})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 6}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
}

TEST(ViewOps, ReshapeAtOpset1TakesTheShapeAttribute) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 3});
  auto r = b.op("Reshape", {x}, attrs({{"shape", attr_ints({3, -1})}}));
  b.output(b.op("Transpose", {r}));
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 3})});
  // r = [[0,1],[2,3],[4,5]]
  EXPECT_EQ(out[0].shape, (Shape64{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 2, 4, 1, 3, 5}));
}

TEST(ViewOps, ReshapeWithAMismatchedElementCountFailsAtRunTime) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto target = b.constant("target", i64({2}, {-1, 4}));
  b.output(b.op("Reshape", {x, target}));
  testing::expect_run_error(b.build(), {iota_f32({6})}, "Reshape_0", "must be a multiple of 4");
}

TEST(ViewOps, ReshapeWithARunTimeTargetFailsNamingTheNode) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto t = b.input("t", DType::I64, {1});
  b.output(b.op("Reshape", {x, t}));
  testing::expect_run_error(b.build(), {iota_f32({6}), i64({1}, {6})}, "Reshape_0", "known at compile time");
}

TEST(ViewOps, TransposeDefaultsToReversingTheAxes) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Transpose", {x}));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{3, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(ViewOps, TransposeWithABadPermFailsNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Transpose", {x}, attrs({{"perm", attr_ints({0, 0})}})));
  testing::expect_run_error(b.build(), {iota_f32({2, 3})}, "Transpose_0", "not a permutation");
}

TEST(ViewOps, FlattenAtAxisZeroAndAtANegativeAxis) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 3, 2});
  auto f0 = b.op("Flatten", {x}, attrs({{"axis", attr_int(0)}}));
  auto f1 = b.op("Flatten", {x}, attrs({{"axis", attr_int(-1)}}));
  b.output(f0);
  b.output(b.op("Transpose", {f1}));
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 3, 2})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 12}));
  EXPECT_EQ(floats(out[0]), floats(iota_f32({12})));
  // f1 is [6, 2]: rows (0,1), (2,3)...; transposed: evens then odds.
  EXPECT_EQ(out[1].shape, (Shape64{2, 6}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
}

TEST(ViewOps, FlattenRejectsNegativeAxesBeforeOpset11) {
  GraphBuilder b(9);
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Flatten", {x}, attrs({{"axis", attr_int(-1)}})));
  testing::expect_run_error(b.build(), {iota_f32({2, 3})}, "Flatten_0", "axis -1 is out of range");
}

// ---- Expand, Tile -----------------------------------------------------------

TEST(ViewOps, ExpandBroadcastsBothWays) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {3, 1});
  auto shape = b.constant("shape", i64({3}, {2, 1, 2}));
  b.output(b.op("Expand", {x, shape}));
  auto out = testing::jit_eval(b.build(), {f32({3, 1}, {1, 2, 3})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 3, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(ViewOps, ExpandToAShapeTakenFromAnotherInput) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {1, m});
  auto y = b.input("y", DType::F32, {n, m});
  b.output(b.op("Expand", {x, b.op("Shape", {y})}));
  auto out = testing::jit_eval(b.build(), {f32({1, 2}, {5, 6}), iota_f32({3, 2})});
  EXPECT_EQ(out[0].shape, (Shape64{3, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 6, 5, 6, 5, 6}));
}

TEST(ViewOps, TileRepeatsEachAxis) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto reps = b.constant("reps", i64({2}, {2, 2}));
  b.output(b.op("Tile", {x, reps}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{4, 4}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST(ViewOps, TileAtOpset1RepeatsOneAxis) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 2});
  b.output(b.op("Tile", {x, b.constant("tiles", i64({}, {3})), b.constant("axis", i64({}, {1}))}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 6}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
}

// Transposes that move the input's innermost axis run in tiles of vectors by
// rows of the axis that walks it (schedules/x86_schedule.cc): extents that
// are no multiple of a tile, a symbolic batch, each against index arithmetic.
TEST(ViewOps, TransposesThatMoveTheInnermostAxisMatchIndexArithmetic) {
  const std::vector<int64_t> in_shape{2, 13, 11, 19};
  std::vector<float> x(numel(in_shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  for (const auto &perm : std::vector<std::vector<int64_t>>{{0, 3, 1, 2}, {0, 2, 3, 1}, {0, 1, 3, 2}, {3, 2, 1, 0}}) {
    GraphBuilder b;
    auto in = b.input("x", DType::F32, {Dim::symbol("n"), 13, 11, 19});
    b.output(b.op("Transpose", {in}, attrs({{"perm", attr_ints(perm)}})));
    auto out = testing::jit_eval(b.build(), {f32(in_shape, x)});
    std::vector<int64_t> out_shape, in_strides{13 * 11 * 19, 11 * 19, 19, 1};
    for (auto p : perm) out_shape.push_back(in_shape[p]);
    std::vector<double> expected;
    for (int64_t a = 0; a < out_shape[0]; ++a)
      for (int64_t b1 = 0; b1 < out_shape[1]; ++b1)
        for (int64_t c = 0; c < out_shape[2]; ++c)
          for (int64_t d = 0; d < out_shape[3]; ++d) {
            const int64_t o[4] = {a, b1, c, d};
            int64_t at = 0;
            for (int i = 0; i < 4; ++i) at += o[i] * in_strides[perm[i]];
            expected.push_back(x[at]);
          }
    SCOPED_TRACE("perm " + std::to_string(perm[0]) + std::to_string(perm[1]) + std::to_string(perm[2]) +
                 std::to_string(perm[3]));
    EXPECT_EQ(out[0].shape, out_shape);
    EXPECT_EQ(floats(out[0]), expected);
  }
}

}  // namespace
}  // namespace disco
