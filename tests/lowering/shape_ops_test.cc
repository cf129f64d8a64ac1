// Numeric tests of the shape ops (lowering/ops/shape_ops.cc): Shape, Size,
// Constant, ConstantOfShape and Range. Each graph runs through inference,
// lowering and Halide's JIT, and is compared with values worked out by hand
// from the ONNX operator spec. Inputs use symbolic dims wherever the op allows.
#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "lowering/known_values.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim n = Dim::symbol("n"), m = Dim::symbol("m");

// ---- Shape, Size ------------------------------------------------------------

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

// ---- Constant, ConstantOfShape, Range ---------------------------------------

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
  testing::expect_run_error(b.build(), {}, "Constant_0", "sparse_value");
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

TEST(ShapeOps, ConstantOfShapeEmptyWithASymbolicDim) {
  // [0, n]: no elements, yet n is symbolic (maskrcnn's empty masks); inference threw on n.
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, 2});
  auto shape = b.op("Concat", {b.constant("zero", i64({1}, {0})), b.op("Shape", {x})}, attrs({{"axis", attr_int(0)}}));
  b.output(b.op("ConstantOfShape", {shape}));
  auto out = testing::jit_eval(b.build(), {iota_f32({3, 2})});
  EXPECT_EQ(out[0].shape, (Shape64{0, 3, 2}));
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

// torch.arange(seq, dtype=float) of rotary and sinusoidal position tables:
// Range(start, Cast(seq, float), delta) with whole start and delta. It needed
// seq at compile time (one compile per sequence length); now one compile
// serves every length. Elements as torch.arange gives them.
Graph float_ranges_to_a_cast_dim(DType t, bool half_step) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {n, m});
  auto seq = b.op("Gather", {b.op("Shape", {x}), b.constant("one", i64({}, {1}))});
  auto seqf = b.op("Cast", {seq}, attrs({{"to", attr_int(t == DType::F32 ? 1 : 11)}}));
  auto scalar = [&](const std::string &name, double v) {
    TensorData d(t, {});
    if (t == DType::F32)
      d.mutable_as<float>()[0] = static_cast<float>(v);
    else
      d.mutable_as<double>()[0] = v;
    return b.constant(name, d);
  };
  b.output(b.op("Range", {scalar("start_one", 1), seqf, scalar("two", 2)}));
  b.output(b.op("Range", {seqf, scalar("zero", 0), scalar("minus_one", -1)}));
  // Not a whole delta: still needs seq's value at compile time.
  if (half_step) b.output(b.op("Range", {scalar("zero_", 0), seqf, scalar("half", 0.5)}));
  return b.build();
}

TEST(ShapeOps, FloatRangeUpToAShapeValueCastToFloatIsOneCompileForEveryLength) {
  for (DType t : {DType::F32, DType::F64}) {
    Graph g = float_ranges_to_a_cast_dim(t, false);
    auto out = testing::jit_eval(g, {iota_f32({1, 6})});
    EXPECT_EQ(out[0].dtype, t);
    EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 3, 5}));
    EXPECT_EQ(floats(out[1]), (std::vector<double>{6, 5, 4, 3, 2, 1}));
    out = testing::jit_eval(g, {iota_f32({3, 2})});
    EXPECT_EQ(floats(out[0]), (std::vector<double>{1}));
    EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 1}));
  }
}

TEST(ShapeOps, FloatRangeOfAHalfStepStillNeedsItsLimitAtCompileTime) {
  try {
    testing::jit_eval(float_ranges_to_a_cast_dim(DType::F32, true), {iota_f32({1, 6})});
    FAIL() << "expected ValueRequired";
  } catch (const ValueRequired &e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace disco
