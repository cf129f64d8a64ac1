// Numeric tests of the shape and view ops: each graph runs through inference,
// lowering and Halide's JIT, and is compared with values worked out by hand
// from the ONNX operator spec. Inputs use symbolic dims wherever the op allows.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using Shape64 = std::vector<int64_t>;
using testing::boolean;
using testing::f32;
using testing::floats;
using testing::i32;
using testing::i64;
using testing::iota_f32;

const Dim n = Dim::symbol("n"), m = Dim::symbol("m"), k = Dim::symbol("k");
constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntMin = std::numeric_limits<int64_t>::min();

Attributes attrs(std::initializer_list<std::pair<const std::string, Attribute>> a) { return Attributes(a); }

// Runs the graph and expects `what` in the error, plus the failing node's name.
void expect_error(Graph g, const std::vector<TensorData> &inputs, const std::string &node, const std::string &what) {
  testing::expect_error_naming([&] { testing::jit_eval(std::move(g), inputs); }, node, what);
}

// ---- Shape, Size -----------------------------------------------------------------

TEST(ShapeOps, ShapeReportsTheRunTimeExtentsOfSymbolicDims) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Shape", {x}));
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 3})});
  EXPECT_EQ(out[0].dtype, DType::I64);
  EXPECT_EQ(out[0].to_int64(), (Shape64{2, 3}));
}

TEST(ShapeOps, ShapeAtOpset15TakesStartAndEnd) {
  GraphBuilder b(15);
  auto x = b.input("x", DType::F32, {n, 3, 4});
  b.output(b.op("Shape", {x}, attrs({{"start", attr_int(-2)}})));
  b.output(b.op("Shape", {x}, attrs({{"end", attr_int(-1)}})));
  b.output(b.op("Shape", {x}, attrs({{"start", attr_int(-10)}, {"end", attr_int(10)}})));
  auto out = testing::jit_eval(b.build(), {iota_f32({5, 3, 4})});
  EXPECT_EQ(out[0].to_int64(), (Shape64{3, 4}));
  EXPECT_EQ(out[1].to_int64(), (Shape64{5, 3}));
  EXPECT_EQ(out[2].to_int64(), (Shape64{5, 3, 4}));
}

TEST(ShapeOps, SizeCountsTheElements) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Size", {x}));
  auto out = testing::jit_eval(b.build(), {iota_f32({4, 3})});
  EXPECT_TRUE(out[0].shape.empty());
  EXPECT_EQ(out[0].to_int64(), (Shape64{12}));
}

// ---- Gather ------------------------------------------------------------------------

TEST(ShapeOps, GatherWithNegativeConstantIndicesPicksRowsFromTheEnd) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 2});
  auto idx = b.constant("idx", i64({2}, {-1, 0}));
  b.output(b.op("Gather", {x, idx}));
  auto out = testing::jit_eval(b.build(), {f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 6, 1, 2}));
}

TEST(ShapeOps, GatherOnAxisOneWithRunTimeTwoDimensionalIndices) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  auto idx = b.input("idx", DType::I64, {2, 2});
  b.output(b.op("Gather", {x, idx}, attrs({{"axis", attr_int(1)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2, 2}, {0, -1, 1, 1})});
  // out[i][j][k] = x[i][idx[j][k]]
  EXPECT_EQ(out[0].shape, (Shape64{2, 2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 3, 2, 2, 4, 6, 5, 5}));
}

TEST(ShapeOps, GatherWithAScalarIndexDropsTheAxis) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  auto idx = b.constant("idx", i32({}, {2}));
  b.output(b.op("Gather", {x, idx}, attrs({{"axis", attr_int(-1)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{3, 6}));
}

TEST(ShapeOps, GatherAxisOutOfRangeFailsNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  auto idx = b.constant("idx", i64({}, {0}));
  b.output(b.op("Gather", {x, idx}, attrs({{"axis", attr_int(2)}})));
  expect_error(b.build(), {iota_f32({2, 3})}, "Gather_0", "axis 2 is out of range");
}

TEST(ShapeOps, GatherConstantIndexBeyondAFixedDimFails) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  auto idx = b.constant("idx", i64({}, {3}));
  b.output(b.op("Gather", {x, idx}, attrs({{"axis", attr_int(1)}})));
  expect_error(b.build(), {iota_f32({2, 3})}, "Gather_0", "index 3 is out of range");
}

// ---- Unsqueeze, Squeeze ------------------------------------------------------------

TEST(ShapeOps, UnsqueezeReadsAxesFromTheAttributeBeforeOpset13) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {n, 2});
  b.output(b.op("Unsqueeze", {x}, attrs({{"axes", attr_ints({0, -1})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 2, 2, 1}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ShapeOps, UnsqueezeReadsAxesFromTheInputSinceOpset13) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto axes = b.constant("axes", i64({1}, {1}));
  b.output(b.op("Unsqueeze", {x, axes}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 1, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ShapeOps, UnsqueezeWithRunTimeAxesFailsNamingTheNode) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto axes = b.input("axes", DType::I64, {1});
  b.output(b.op("Unsqueeze", {x, axes}));
  expect_error(b.build(), {iota_f32({2, 2}), i64({1}, {0})}, "Unsqueeze_0", "known at compile time");
}

TEST(ShapeOps, SqueezeRemovesTheGivenAxes) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {n, 1, 2});
  b.output(b.op("Squeeze", {x}, attrs({{"axes", attr_ints({-2})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 1, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ShapeOps, SqueezeWithoutAxesRemovesEveryDimOfOne) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {1, 3, 1});
  b.output(b.op("Squeeze", {x}));
  auto out = testing::jit_eval(b.build(), {f32({1, 3, 1}, {7, 8, 9})});
  EXPECT_EQ(out[0].shape, (Shape64{3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{7, 8, 9}));
}

TEST(ShapeOps, SqueezeOfADimThatIsNotOneFails) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {2, 3});
  auto axes = b.constant("axes", i64({1}, {0}));
  b.output(b.op("Squeeze", {x, axes}));
  expect_error(b.build(), {iota_f32({2, 3})}, "Squeeze_0", "cannot squeeze dim 0 of extent 2");
}

// ---- Concat --------------------------------------------------------------------------

TEST(ShapeOps, ConcatAlongTheLastAxisOfSymbolicRows) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 2});
  auto y = b.input("y", DType::F32, {n, 1});
  b.output(b.op("Concat", {x, y}, attrs({{"axis", attr_int(-1)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4}), f32({2, 1}, {10, 20})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 10, 3, 4, 20}));
}

TEST(ShapeOps, ConcatOfThreeInputsWithDifferentSymbolicLengths) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n});
  auto y = b.input("y", DType::F32, {m});
  auto z = b.input("z", DType::F32, {k});
  b.output(b.op("Concat", {x, y, z}, attrs({{"axis", attr_int(0)}})));
  auto out = testing::jit_eval(b.build(), {f32({1}, {1}), f32({2}, {2, 3}), f32({3}, {4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{6}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(ShapeOps, ConcatSkipsAnEmptyInput) {
  // The empty input is a constant: jit_eval cannot pass an empty run-time buffer.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n});
  auto e = b.constant("e", f32({0}, {}));
  b.output(b.op("Concat", {e, x, e}, attrs({{"axis", attr_int(0)}})));
  auto out = testing::jit_eval(b.build(), {f32({2}, {1, 2})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2}));
}

TEST(ShapeOps, ConcatWithMismatchedOtherDimsFailsAtRunTime) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 2});
  auto y = b.input("y", DType::F32, {m, 2});
  b.output(b.op("Concat", {x, y}, attrs({{"axis", attr_int(1)}})));
  expect_error(b.build(), {iota_f32({2, 2}), iota_f32({3, 2})}, "Concat_0", "dim 0 of input 1");
}

// ---- Slice -----------------------------------------------------------------------------

TEST(ShapeOps, SliceAtOpset1TakesAttributes) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 4});
  b.output(b.op("Slice", {x}, attrs({{"starts", attr_ints({1, 0})}, {"ends", attr_ints({2, 3})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 6, 7}));
}

TEST(ShapeOps, SliceAtOpset1ClampsNegativeAndLargeEnds) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 4});
  b.output(b.op("Slice", {x}, attrs({{"starts", attr_ints({0, 1})}, {"ends", attr_ints({-1, 1000})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{2, 3, 4}));
}

TEST(ShapeOps, SliceWithNegativeStepOverASymbolicDim) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto starts = b.constant("starts", i64({1}, {-1}));
  auto ends = b.constant("ends", i64({1}, {kIntMin}));
  auto axes = b.constant("axes", i64({1}, {0}));
  auto steps = b.constant("steps", i64({1}, {-2}));
  b.output(b.op("Slice", {x, starts, ends, axes, steps}));
  auto g = b.build();
  auto out = testing::jit_eval(g, {f32({5}, {0, 1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{4, 2, 0}));
  // An even length skips the first element.
  out = testing::jit_eval(g, {f32({4}, {0, 1, 2, 3})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{3, 1}));
}

TEST(ShapeOps, SliceWithStepsAndClampedEndsOnTwoAxes) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, m});
  auto starts = b.constant("starts", i64({2}, {1, 0}));
  auto ends = b.constant("ends", i64({2}, {1000, kIntMax}));
  auto axes = b.constant("axes", i64({2}, {-1, 0}));
  auto steps = b.constant("steps", i64({2}, {2, 1}));
  b.output(b.op("Slice", {x, starts, ends, axes, steps}));
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 5})});
  // Columns 1 and 3 of [[0..4], [5..9]].
  EXPECT_EQ(out[0].shape, (Shape64{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 3, 6, 8}));
}

TEST(ShapeOps, SliceFromTheEndOfASymbolicDim) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto starts = b.constant("starts", i64({1}, {-3}));
  auto ends = b.constant("ends", i64({1}, {-1}));
  b.output(b.op("Slice", {x, starts, ends}));
  auto g = b.build();
  auto out = testing::jit_eval(g, {f32({6}, {0, 1, 2, 3, 4, 5})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{3, 4}));
  // Shorter than the start: clamped to the beginning.
  out = testing::jit_eval(g, {f32({2}, {7, 8})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{7}));
}

TEST(ShapeOps, SliceEndsFromAnotherInputsShape) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, m});
  auto y = b.input("y", DType::F32, {k});
  auto zero = b.constant("zero", i64({1}, {0}));
  auto one = b.constant("one", i64({1}, {1}));
  b.output(b.op("Slice", {x, zero, b.op("Shape", {y}), one}));
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 4}), iota_f32({3})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 2, 4, 5, 6}));
}

TEST(ShapeOps, SliceWithAZeroStepFailsNamingTheNode) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto s = b.constant("s", i64({1}, {0}));
  auto e = b.constant("e", i64({1}, {2}));
  auto a = b.constant("a", i64({1}, {0}));
  auto st = b.constant("st", i64({1}, {0}));
  b.output(b.op("Slice", {x, s, e, a, st}));
  expect_error(b.build(), {iota_f32({3})}, "Slice_0", "step of axis 0 is 0");
}

// ---- Reshape, Flatten, Transpose -----------------------------------------------------------

TEST(ShapeOps, ReshapeToHeadsUsesShapeArithmeticFromTheInput) {
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

TEST(ShapeOps, ReshapeWithZeroCopiesAndMinusOneInfers) {
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

TEST(ShapeOps, ReshapeMergesSymbolicLeadingDims) {
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

TEST(ShapeOps, ReshapeAtOpset1TakesTheShapeAttribute) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 3});
  auto r = b.op("Reshape", {x}, attrs({{"shape", attr_ints({3, -1})}}));
  b.output(b.op("Transpose", {r}));
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 3})});
  // r = [[0,1],[2,3],[4,5]]
  EXPECT_EQ(out[0].shape, (Shape64{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 2, 4, 1, 3, 5}));
}

TEST(ShapeOps, ReshapeWithAMismatchedElementCountFailsAtRunTime) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto target = b.constant("target", i64({2}, {-1, 4}));
  b.output(b.op("Reshape", {x, target}));
  expect_error(b.build(), {iota_f32({6})}, "Reshape_0", "must be a multiple of 4");
}

TEST(ShapeOps, ReshapeWithARunTimeTargetFailsNamingTheNode) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto t = b.input("t", DType::I64, {1});
  b.output(b.op("Reshape", {x, t}));
  expect_error(b.build(), {iota_f32({6}), i64({1}, {6})}, "Reshape_0", "known at compile time");
}

TEST(ShapeOps, TransposeDefaultsToReversingTheAxes) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Transpose", {x}));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{3, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(ShapeOps, TransposeWithABadPermFailsNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Transpose", {x}, attrs({{"perm", attr_ints({0, 0})}})));
  expect_error(b.build(), {iota_f32({2, 3})}, "Transpose_0", "not a permutation");
}

TEST(ShapeOps, FlattenAtAxisZeroAndAtANegativeAxis) {
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

TEST(ShapeOps, FlattenRejectsNegativeAxesBeforeOpset11) {
  GraphBuilder b(9);
  auto x = b.input("x", DType::F32, {n, 3});
  b.output(b.op("Flatten", {x}, attrs({{"axis", attr_int(-1)}})));
  expect_error(b.build(), {iota_f32({2, 3})}, "Flatten_0", "axis -1 is out of range");
}

// ---- Constant, ConstantOfShape, Range ------------------------------------------------------

TEST(ShapeOps, ConstantFromEachKindOfAttribute) {
  GraphBuilder b(13);
  b.output(b.op("Constant", {}, attrs({{"value_ints", attr_ints({4, 5, 6})}})));
  b.output(b.op("Constant", {}, attrs({{"value_float", attr_float(2.5f)}})));
  b.output(b.op("Constant", {}, attrs({{"value_floats", attr_floats({1.5f, -1})}})));
  Attribute vi;
  vi.kind = Attribute::Int;
  vi.i = 9;
  b.output(b.op("Constant", {}, attrs({{"value_int", vi}})));
  b.output(b.op("Constant", {}, attrs({{"value", attr_tensor(f32({2, 1}, {3, 4}))}})));
  auto out = testing::jit_eval(b.build(), {});
  EXPECT_EQ(out[0].to_int64(), (Shape64{4, 5, 6}));
  EXPECT_EQ(out[1].shape, Shape64{});
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2.5}));
  EXPECT_EQ(floats(out[2]), (std::vector<double>{1.5, -1}));
  EXPECT_EQ(out[3].dtype, DType::I64);
  EXPECT_EQ(out[3].to_int64(), (Shape64{9}));
  EXPECT_EQ(out[4].shape, (Shape64{2, 1}));
  EXPECT_EQ(floats(out[4]), (std::vector<double>{3, 4}));
}

TEST(ShapeOps, ConstantFeedsAnElementwiseOp) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto c = b.op("Constant", {}, attrs({{"value_float", attr_float(10)}}));
  b.output(b.op("Add", {x, c}));
  auto out = testing::jit_eval(b.build(), {f32({2}, {1, 2})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{11, 12}));
}

TEST(ShapeOps, SparseConstantsFailNamingTheNode) {
  GraphBuilder b(13);
  b.output(b.op("Constant", {}, attrs({{"sparse_value", attr_tensor(f32({1}, {1}))}})));
  expect_error(b.build(), {}, "Constant_0", "sparse_value");
}

TEST(ShapeOps, ConstantOfShapeOverASymbolicShape) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  b.output(b.op("ConstantOfShape", {b.op("Shape", {x})}, attrs({{"value", attr_tensor(i64({1}, {7}))}})));
  auto out = testing::jit_eval(b.build(), {iota_f32({3, 2})});
  EXPECT_EQ(out[0].dtype, DType::I64);
  EXPECT_EQ(out[0].shape, (Shape64{3, 2}));
  EXPECT_EQ(out[0].to_int64(), (Shape64{7, 7, 7, 7, 7, 7}));
}

TEST(ShapeOps, ConstantOfShapeDefaultsToFloatZero) {
  GraphBuilder b(13);
  auto shape = b.constant("shape", i64({2}, {2, 2}));
  b.output(b.op("ConstantOfShape", {shape}));
  auto out = testing::jit_eval(b.build(), {});
  EXPECT_EQ(out[0].dtype, DType::F32);
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 0, 0, 0}));
}

TEST(ShapeOps, RangeOfConstantsFollowsTheSpecExamples) {
  GraphBuilder b(13);
  auto r1 = b.op("Range", {b.constant("s1", i64({}, {3})), b.constant("l1", i64({}, {9})),
                           b.constant("d1", i64({}, {3}))});
  auto r2 = b.op("Range", {b.constant("s2", i32({}, {10})), b.constant("l2", i32({}, {4})),
                           b.constant("d2", i32({}, {-2}))});
  auto r3 = b.op("Range", {b.constant("s3", f32({}, {0.5f})), b.constant("l3", f32({}, {2})),
                           b.constant("d3", f32({}, {0.5f}))});
  b.output(r1);
  b.output(r2);
  b.output(r3);
  auto out = testing::jit_eval(b.build(), {});
  EXPECT_EQ(out[0].to_int64(), (Shape64{3, 6}));
  EXPECT_EQ(out[1].dtype, DType::I32);
  EXPECT_EQ(out[1].to_int64(), (Shape64{10, 8, 6}));
  EXPECT_EQ(floats(out[2]), (std::vector<double>{0.5, 1, 1.5}));
}

TEST(ShapeOps, RangeUpToASymbolicLimit) {
  // position_ids = arange(1, seq, 2)
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, m});
  auto seq = b.op("Gather", {b.op("Shape", {x}), b.constant("one", i64({}, {1}))});
  b.output(b.op("Range", {b.constant("start", i64({}, {1})), seq, b.constant("delta", i64({}, {2}))}));
  auto g = b.build();
  auto out = testing::jit_eval(g, {iota_f32({1, 6})});
  EXPECT_EQ(out[0].to_int64(), (Shape64{1, 3, 5}));
  out = testing::jit_eval(g, {iota_f32({1, 1})});
  EXPECT_EQ(out[0].shape, (Shape64{0}));
}

// ---- Expand, Tile ---------------------------------------------------------------------------

TEST(ShapeOps, ExpandBroadcastsBothWays) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {3, 1});
  auto shape = b.constant("shape", i64({3}, {2, 1, 2}));
  b.output(b.op("Expand", {x, shape}));
  auto out = testing::jit_eval(b.build(), {f32({3, 1}, {1, 2, 3})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 3, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(ShapeOps, ExpandToAShapeTakenFromAnotherInput) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {1, m});
  auto y = b.input("y", DType::F32, {n, m});
  b.output(b.op("Expand", {x, b.op("Shape", {y})}));
  auto out = testing::jit_eval(b.build(), {f32({1, 2}, {5, 6}), iota_f32({3, 2})});
  EXPECT_EQ(out[0].shape, (Shape64{3, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 6, 5, 6, 5, 6}));
}

TEST(ShapeOps, TileRepeatsEachAxis) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto reps = b.constant("reps", i64({2}, {2, 2}));
  b.output(b.op("Tile", {x, reps}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{4, 4}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST(ShapeOps, TileAtOpset1RepeatsOneAxis) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 2});
  b.output(b.op("Tile", {x, b.constant("tiles", i64({}, {3})), b.constant("axis", i64({}, {1}))}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 6}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
}

// ---- Split ------------------------------------------------------------------------------------

TEST(ShapeOps, SplitEvenlyIntoTheNumberOfOutputs) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 4});
  auto outs = b.op_n("Split", {x}, 2, attrs({{"axis", attr_int(1)}}));
  b.output(outs[0]);
  b.output(outs[1]);
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 4})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 4, 5}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 3, 6, 7}));
}

TEST(ShapeOps, SplitSizesFromTheAttributeBeforeOpset13) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {n});
  auto outs = b.op_n("Split", {x}, 2, attrs({{"split", attr_ints({1, 3})}}));
  b.output(outs[0]);
  b.output(outs[1]);
  auto out = testing::jit_eval(b.build(), {f32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 3, 4}));
}

TEST(ShapeOps, SplitSizesFromTheInputSinceOpset13) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {2, n});
  auto split = b.constant("split", i64({3}, {2, 0, 1}));
  auto outs = b.op_n("Split", {x, split}, 3, attrs({{"axis", attr_int(-1)}}));
  b.output(outs[0]);
  b.output(outs[2]);
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 3})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 3, 4}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 5}));
}

TEST(ShapeOps, SplitWithNumOutputsAtOpset18LeavesTheRemainderLast) {
  GraphBuilder b(18);
  auto x = b.input("x", DType::F32, {n});
  auto outs = b.op_n("Split", {x}, 3, attrs({{"num_outputs", attr_int(3)}}));
  for (auto &o : outs) b.output(o);
  auto out = testing::jit_eval(b.build(), {f32({5}, {1, 2, 3, 4, 5})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{3, 4}));
  EXPECT_EQ(floats(out[2]), (std::vector<double>{5}));
}

TEST(ShapeOps, SplitOfASymbolicDimThatDoesNotDivideFailsAtRunTime) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto outs = b.op_n("Split", {x}, 2);
  b.output(outs[0]);
  expect_error(b.build(), {iota_f32({5})}, "Split_0", "must split evenly into 2");
}

// ---- Pad -----------------------------------------------------------------------------------

TEST(ShapeOps, PadConstantWithAValueInput) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {1, n});
  auto pads = b.constant("pads", i64({4}, {0, 1, 0, 2}));
  auto v = b.constant("v", f32({}, {-1}));
  b.output(b.op("Pad", {x, pads, v}));
  auto out = testing::jit_eval(b.build(), {f32({1, 2}, {1, 2})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 5}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-1, 1, 2, -1, -1}));
}

TEST(ShapeOps, PadReflectAndEdge) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto pads = b.constant("pads", i64({2}, {2, 1}));
  b.output(b.op("Pad", {x, pads}, attrs({{"mode", attr_string("reflect")}})));
  b.output(b.op("Pad", {x, pads}, attrs({{"mode", attr_string("edge")}})));
  auto out = testing::jit_eval(b.build(), {f32({3}, {1, 2, 3})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{1, 1, 1, 2, 3, 3}));
}

TEST(ShapeOps, PadReflectNeedsMoreElementsThanThePad) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto pads = b.constant("pads", i64({2}, {2, 0}));
  b.output(b.op("Pad", {x, pads}, attrs({{"mode", attr_string("reflect")}})));
  expect_error(b.build(), {iota_f32({2})}, "Pad_0", "at least 3");
}

TEST(ShapeOps, PadBeforeOpset11TakesAttributesAndCropsWithNegativePads) {
  GraphBuilder b(2);
  auto x = b.input("x", DType::F32, {4});
  b.output(b.op("Pad", {x}, attrs({{"pads", attr_ints({-1, 2})}, {"value", attr_float(9)}})));
  auto out = testing::jit_eval(b.build(), {f32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{2, 3, 4, 9, 9}));
}

TEST(ShapeOps, PadAtOpset18PadsOnlyTheGivenAxes) {
  GraphBuilder b(18);
  auto x = b.input("x", DType::F32, {n, 2});
  auto pads = b.constant("pads", i64({2}, {1, 0}));
  auto axes = b.constant("axes", i64({1}, {-1}));
  b.output(b.op("Pad", {x, pads, "", axes}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 2, 0, 3, 4}));
}

TEST(ShapeOps, PadWrapModeIsRejected) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto pads = b.constant("pads", i64({2}, {1, 1}));
  b.output(b.op("Pad", {x, pads}, attrs({{"mode", attr_string("wrap")}})));
  expect_error(b.build(), {iota_f32({3})}, "Pad_0", "'wrap' is not supported");
}

// ---- Where, comparisons, logical -------------------------------------------------------------

TEST(ShapeOps, WhereBroadcastsItsThreeInputs) {
  GraphBuilder b(13);
  auto c = b.input("c", DType::Bool, {n, 1});
  auto x = b.input("x", DType::F32, {n, 3});
  auto y = b.input("y", DType::F32, {});
  b.output(b.op("Where", {c, x, y}));
  auto out = testing::jit_eval(b.build(), {boolean({2, 1}, {1, 0}), f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({}, {-1})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, -1, -1, -1}));
}

TEST(ShapeOps, ComparisonsBroadcastAndGiveBools) {
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

TEST(ShapeOps, LogicalOpsFollowTheirTruthTables) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::Bool, {n});
  auto y = b.input("y", DType::Bool, {n});
  for (const char *op : {"And", "Or", "Xor"}) b.output(b.op(op, {x, y}));
  auto out = testing::jit_eval(b.build(), {boolean({4}, {0, 0, 1, 1}), boolean({4}, {0, 1, 0, 1})});
  EXPECT_EQ(out[0].to_int64(), (Shape64{0, 0, 0, 1}));
  EXPECT_EQ(out[1].to_int64(), (Shape64{0, 1, 1, 1}));
  EXPECT_EQ(out[2].to_int64(), (Shape64{0, 1, 1, 0}));
}

TEST(ShapeOps, LegacyBroadcastAlignsBAtTheGivenAxis) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 3});
  auto y = b.input("y", DType::F32, {2});
  b.output(b.op("Greater", {x, y}, attrs({{"broadcast", attr_int(1)}, {"axis", attr_int(0)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 5})});
  // Row 0 compared with 1, row 1 with 5.
  EXPECT_EQ(out[0].to_int64(), (Shape64{0, 1, 1, 0, 0, 1}));
}

TEST(ShapeOps, LogicalOpsRejectNonBoolInputs) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  b.output(b.op("And", {x, x}));
  expect_error(b.build(), {iota_f32({2})}, "And_0", "must be bool");
}

// ---- Clip, Min, Max, Sum, Mean ----------------------------------------------------------------

TEST(ShapeOps, ClipBeforeOpset11UsesAttributes) {
  GraphBuilder b(6);
  auto x = b.input("x", DType::F32, {n});
  b.output(b.op("Clip", {x}, attrs({{"min", attr_float(-1)}, {"max", attr_float(1)}})));
  auto out = testing::jit_eval(b.build(), {f32({4}, {-3, -0.5f, 0.5f, 3})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-1, -0.5, 0.5, 1}));
}

TEST(ShapeOps, ClipSinceOpset11TakesOptionalBoundInputs) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto hi = b.constant("hi", f32({}, {2}));
  b.output(b.op("Clip", {x, "", hi}));
  auto xi = b.input("xi", DType::I32, {n});
  b.output(b.op("Clip", {xi, b.constant("lo", i32({}, {0}))}));
  auto out = testing::jit_eval(b.build(), {f32({3}, {-5, 1, 5}), i32({3}, {-5, 1, 5})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-5, 1, 2}));
  EXPECT_EQ(out[1].to_int64(), (Shape64{0, 1, 5}));
}

TEST(ShapeOps, VariadicMinMaxSumMeanBroadcast) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto y = b.input("y", DType::F32, {2});
  auto z = b.input("z", DType::F32, {n, 1});
  for (const char *op : {"Min", "Max", "Sum", "Mean"}) b.output(b.op(op, {x, y, z}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 6, 3, 8}), f32({2}, {2, 4}), f32({2, 1}, {3, 0})});
  // Triples per element: (1,2,3) (6,4,3) (3,2,0) (8,4,0)
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 3, 0, 0}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{3, 6, 3, 8}));
  EXPECT_EQ(floats(out[2]), (std::vector<double>{6, 13, 5, 12}));
  EXPECT_LE(testing::closeness(out[3], f32({2, 2}, {2, 13.0f / 3, 5.0f / 3, 4})), 1.0);
}

}  // namespace
}  // namespace disco
