// Numeric tests of the index ops (lowering/ops/index_ops.cc): Gather, Concat,
// Slice, Split and Pad. Each graph runs through inference, lowering and
// Halide's JIT, and is compared with values worked out by hand from the ONNX
// operator spec. Inputs use symbolic dims wherever the op allows.
#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim n = Dim::symbol("n"), m = Dim::symbol("m"), k = Dim::symbol("k");

// ---- Gather -----------------------------------------------------------------

TEST(IndexOps, GatherWithNegativeConstantIndicesPicksRowsFromTheEnd) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 2});
  auto idx = b.constant("idx", i64({2}, {-1, 0}));
  b.output(b.op("Gather", {x, idx}));
  auto out = testing::jit_eval(b.build(), {f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 6, 1, 2}));
}

TEST(IndexOps, GatherOnAxisOneWithRunTimeTwoDimensionalIndices) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  auto idx = b.input("idx", DType::I64, {2, 2});
  b.output(b.op("Gather", {x, idx}, attrs({{"axis", attr_int(1)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2, 2}, {0, -1, 1, 1})});
  // out[i][j][k] = x[i][idx[j][k]]
  EXPECT_EQ(out[0].shape, (Shape64{2, 2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 3, 2, 2, 4, 6, 5, 5}));
}

TEST(IndexOps, GatherWithAScalarIndexDropsTheAxis) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  auto idx = b.constant("idx", i32({}, {2}));
  b.output(b.op("Gather", {x, idx}, attrs({{"axis", attr_int(-1)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{3, 6}));
}

// Gathering x [n, 3] by the constant scalar `index` along `axis` fails,
// naming Gather_0 and saying `why`.
void expect_gather_fails(int64_t index, int64_t axis, const std::string &why) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 3});
  auto idx = b.constant("idx", i64({}, {index}));
  b.output(b.op("Gather", {x, idx}, attrs({{"axis", attr_int(axis)}})));
  testing::expect_run_error(b.build(), {iota_f32({2, 3})}, "Gather_0", why);
}

TEST(IndexOps, GatherAxisOutOfRangeFailsNamingTheNode) { expect_gather_fails(0, 2, "axis 2 is out of range"); }

TEST(IndexOps, GatherConstantIndexBeyondAFixedDimFails) { expect_gather_fails(3, 1, "index 3 is out of range"); }

// ---- Concat -----------------------------------------------------------------

TEST(IndexOps, ConcatAlongTheLastAxisOfSymbolicRows) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 2});
  auto y = b.input("y", DType::F32, {n, 1});
  b.output(b.op("Concat", {x, y}, attrs({{"axis", attr_int(-1)}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4}), f32({2, 1}, {10, 20})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 10, 3, 4, 20}));
}

TEST(IndexOps, ConcatOfThreeInputsWithDifferentSymbolicLengths) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n});
  auto y = b.input("y", DType::F32, {m});
  auto z = b.input("z", DType::F32, {k});
  b.output(b.op("Concat", {x, y, z}, attrs({{"axis", attr_int(0)}})));
  auto out = testing::jit_eval(b.build(), {f32({1}, {1}), f32({2}, {2, 3}), f32({3}, {4, 5, 6})});
  EXPECT_EQ(out[0].shape, (Shape64{6}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(IndexOps, ConcatSkipsAnEmptyInput) {
  // The empty input is a constant: jit_eval cannot pass an empty run-time buffer.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n});
  auto e = b.constant("e", f32({0}, {}));
  b.output(b.op("Concat", {e, x, e}, attrs({{"axis", attr_int(0)}})));
  auto out = testing::jit_eval(b.build(), {f32({2}, {1, 2})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2}));
}

TEST(IndexOps, ConcatWithMismatchedOtherDimsFailsAtRunTime) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n, 2});
  auto y = b.input("y", DType::F32, {m, 2});
  b.output(b.op("Concat", {x, y}, attrs({{"axis", attr_int(1)}})));
  testing::expect_run_error(b.build(), {iota_f32({2, 2}), iota_f32({3, 2})}, "Concat_0", "dim 0 of input 1");
}

// ---- Slice ------------------------------------------------------------------

TEST(IndexOps, SliceAtOpset1TakesAttributes) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 4});
  b.output(b.op("Slice", {x}, attrs({{"starts", attr_ints({1, 0})}, {"ends", attr_ints({2, 3})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 6, 7}));
}

TEST(IndexOps, SliceAtOpset1ClampsNegativeAndLargeEnds) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 4});
  b.output(b.op("Slice", {x}, attrs({{"starts", attr_ints({0, 1})}, {"ends", attr_ints({-1, 1000})}})));
  auto out = testing::jit_eval(b.build(), {f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{2, 3, 4}));
}

TEST(IndexOps, SliceWithNegativeStepOverASymbolicDim) {
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

TEST(IndexOps, SliceWithStepsAndClampedEndsOnTwoAxes) {
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

TEST(IndexOps, SliceFromTheEndOfASymbolicDim) {
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

TEST(IndexOps, SliceEndsFromAnotherInputsShape) {
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

// An end of unknown sign (k - 1: a dim may be 0) is read as counting from the
// front; the store learns k >= 1 and a run-time check refuses k = 0.
Graph slice_to_one_less_than(const Dim &len) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, m});
  auto y = b.input("y", DType::F32, {len});
  auto zero = b.constant("zero", i64({1}, {0}));
  auto one = b.constant("one", i64({1}, {1}));
  b.output(b.op("Slice", {x, zero, b.op("Sub", {b.op("Shape", {y}), one}), one}));
  return b.build();
}

TEST(IndexOps, SliceEndOfUnknownSignCountsFromTheFront) {
  auto out = testing::jit_eval(slice_to_one_less_than(k), {iota_f32({2, 4}), iota_f32({3})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 4, 5}));
}

TEST(IndexOps, SliceEndOfUnknownSignRefusesADimBelowItsLeastAtRunTime) {
  testing::expect_run_error(slice_to_one_less_than(k), {iota_f32({2, 4}), iota_f32({0})}, "Slice_2",
                            "must be at least 1");
}

// Indices whose sign only the run time knows, as numpy (and ONNX's
// reference) adjusts them: a cache's tail x[-T:] is the whole of x at T = 0
// (-0 is 0) and at T > len(x); an end T - P counts from the back when P > T.
// These were refused at compile time ("sign unknown").
Graph slice_of_x_by_shapes(bool two_symbol_end, int64_t step) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto y = b.input("y", DType::F32, {k});
  auto z = b.input("z", DType::F32, {m});
  auto big = b.constant("big", i64({1}, {step > 0 ? INT64_MAX : INT64_MIN}));
  auto axes = b.constant("axes", i64({1}, {0}));
  auto steps = b.constant("steps", i64({1}, {step}));
  auto ky = b.op("Shape", {y}), mz = b.op("Shape", {z});
  if (two_symbol_end)
    b.output(b.op("Slice", {x, b.constant("zero", i64({1}, {0})), b.op("Sub", {ky, mz}), axes, steps}));
  else
    b.output(b.op("Slice", {x, b.op("Neg", {ky}), big, axes, steps}));
  return b.build();
}

std::vector<double> slice_run(const Graph &g, int64_t k_len, int64_t m_len) {
  return floats(testing::jit_eval(g, {iota_f32({5}), iota_f32({k_len}), iota_f32({m_len})})[0]);
}

TEST(IndexOps, SliceFromTheNegatedLengthOfAnotherInputTakesItsTailAsNumpy) {
  auto g = slice_of_x_by_shapes(false, 1);
  EXPECT_EQ(slice_run(g, 2, 1), (std::vector<double>{3, 4}));           // x[-2:]
  EXPECT_EQ(slice_run(g, 0, 1), (std::vector<double>{0, 1, 2, 3, 4}));  // x[-0:] = x[0:]
  EXPECT_EQ(slice_run(g, 9, 1), (std::vector<double>{0, 1, 2, 3, 4}));  // x[-9:], clamped
}

TEST(IndexOps, SliceBackwardFromANegatedLengthAsNumpy) {
  auto g = slice_of_x_by_shapes(false, -1);
  EXPECT_EQ(slice_run(g, 2, 1), (std::vector<double>{3, 2, 1, 0}));  // x[-2::-1]
  EXPECT_EQ(slice_run(g, 0, 1), (std::vector<double>{0}));           // x[0::-1]
  EXPECT_EQ(slice_run(g, 7, 1), (std::vector<double>{}));            // x[-7::-1]: before the front
}

TEST(IndexOps, SliceEndOfTwoSymbolsCountsFromTheBackWhenNegativeAsNumpy) {
  auto g = slice_of_x_by_shapes(true, 1);
  EXPECT_EQ(slice_run(g, 3, 1), (std::vector<double>{0, 1}));           // x[:2]
  EXPECT_EQ(slice_run(g, 1, 3), (std::vector<double>{0, 1, 2}));        // x[:-2]
  EXPECT_EQ(slice_run(g, 2, 2), (std::vector<double>{}));               // x[:0]
  EXPECT_EQ(slice_run(g, 1, 9), (std::vector<double>{}));               // x[:-8]
  EXPECT_EQ(slice_run(g, 9, 1), (std::vector<double>{0, 1, 2, 3, 4}));  // x[:8]
}

TEST(IndexOps, SliceWithAZeroStepFailsNamingTheNode) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto s = b.constant("s", i64({1}, {0}));
  auto e = b.constant("e", i64({1}, {2}));
  auto a = b.constant("a", i64({1}, {0}));
  auto st = b.constant("st", i64({1}, {0}));
  b.output(b.op("Slice", {x, s, e, a, st}));
  testing::expect_run_error(b.build(), {iota_f32({3})}, "Slice_0", "step of axis 0 is 0");
}

// ---- Split ------------------------------------------------------------------

TEST(IndexOps, SplitEvenlyIntoTheNumberOfOutputs) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 4});
  auto outs = b.op_n("Split", {x}, 2, attrs({{"axis", attr_int(1)}}));
  b.output(outs[0]);
  b.output(outs[1]);
  auto out = testing::jit_eval(b.build(), {iota_f32({2, 4})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 4, 5}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 3, 6, 7}));
}

TEST(IndexOps, SplitSizesFromTheAttributeBeforeOpset13) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {n});
  auto outs = b.op_n("Split", {x}, 2, attrs({{"split", attr_ints({1, 3})}}));
  b.output(outs[0]);
  b.output(outs[1]);
  auto out = testing::jit_eval(b.build(), {f32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 3, 4}));
}

TEST(IndexOps, SplitSizesFromTheInputSinceOpset13) {
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

TEST(IndexOps, SplitWithNumOutputsAtOpset18LeavesTheRemainderLast) {
  GraphBuilder b(18);
  auto x = b.input("x", DType::F32, {n});
  auto outs = b.op_n("Split", {x}, 3, attrs({{"num_outputs", attr_int(3)}}));
  for (auto &o : outs) b.output(o);
  auto out = testing::jit_eval(b.build(), {f32({5}, {1, 2, 3, 4, 5})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{3, 4}));
  EXPECT_EQ(floats(out[2]), (std::vector<double>{5}));
}

TEST(IndexOps, SplitOfASymbolicDimThatDoesNotDivideFailsAtRunTime) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto outs = b.op_n("Split", {x}, 2);
  b.output(outs[0]);
  testing::expect_run_error(b.build(), {iota_f32({5})}, "Split_0", "must split evenly into 2");
}

// ---- Pad --------------------------------------------------------------------

TEST(IndexOps, PadConstantWithAValueInput) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {1, n});
  auto pads = b.constant("pads", i64({4}, {0, 1, 0, 2}));
  auto v = b.constant("v", f32({}, {-1}));
  b.output(b.op("Pad", {x, pads, v}));
  auto out = testing::jit_eval(b.build(), {f32({1, 2}, {1, 2})});
  EXPECT_EQ(out[0].shape, (Shape64{1, 5}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-1, 1, 2, -1, -1}));
}

TEST(IndexOps, PadReflectAndEdge) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto pads = b.constant("pads", i64({2}, {2, 1}));
  b.output(b.op("Pad", {x, pads}, attrs({{"mode", attr_string("reflect")}})));
  b.output(b.op("Pad", {x, pads}, attrs({{"mode", attr_string("edge")}})));
  auto out = testing::jit_eval(b.build(), {f32({3}, {1, 2, 3})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{1, 1, 1, 2, 3, 3}));
}

// Padding x [n] (opset 13) by `before` and `after` in `mode` fails on an
// input of `len` elements, naming Pad_0 and saying `why`.
void expect_pad_fails(int64_t before, int64_t after, const std::string &mode, int64_t len, const std::string &why) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n});
  auto pads = b.constant("pads", i64({2}, {before, after}));
  b.output(b.op("Pad", {x, pads}, attrs({{"mode", attr_string(mode)}})));
  testing::expect_run_error(b.build(), {iota_f32({len})}, "Pad_0", why);
}

TEST(IndexOps, PadReflectNeedsMoreElementsThanThePad) { expect_pad_fails(2, 0, "reflect", 2, "at least 3"); }

TEST(IndexOps, PadBeforeOpset11TakesAttributesAndCropsWithNegativePads) {
  GraphBuilder b(2);
  auto x = b.input("x", DType::F32, {4});
  b.output(b.op("Pad", {x}, attrs({{"pads", attr_ints({-1, 2})}, {"value", attr_float(9)}})));
  auto out = testing::jit_eval(b.build(), {f32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{2, 3, 4, 9, 9}));
}

TEST(IndexOps, PadAtOpset18PadsOnlyTheGivenAxes) {
  GraphBuilder b(18);
  auto x = b.input("x", DType::F32, {n, 2});
  auto pads = b.constant("pads", i64({2}, {1, 0}));
  auto axes = b.constant("axes", i64({1}, {-1}));
  b.output(b.op("Pad", {x, pads, "", axes}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0].shape, (Shape64{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 1, 2, 0, 3, 4}));
}

TEST(IndexOps, PadWrapModeIsRejected) { expect_pad_fails(1, 1, "wrap", 3, "'wrap' is not supported"); }

}  // namespace
}  // namespace disco
