// The forms of ops before opset 7 (issue #24): the binary ops' broadcast/axis
// attributes, PRelu's per-channel slope, Cast's type name, and
// BatchNormalization's consumed_inputs, is_test and spatial. Each graph runs
// through inference, lowering and Halide's JIT, against values worked out by
// hand from the ONNX operator spec of that opset. The ONNX test data's
// opset-6 models (pytorch-converted, pytorch-operator) run under ctest as
// conformance_legacy_* (tests/conformance/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim n = Dim::symbol("n");

TEST(LegacyOpset, BinaryOpsAlignBAtTheAxisWithBroadcastOne) {
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    GraphBuilder b(6);
    auto x = b.input("x", DType::F32, {n, 2, 3});
    auto y = b.input("y", DType::F32, {2});
    b.output(b.op(op, {x, y}, {{"broadcast", attr_int(1)}, {"axis", attr_int(1)}}));
    std::vector<float> xv{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, yv{2, 3};
    auto out = jit_eval(b.build(), {f32({2, 2, 3}, xv), f32({2}, yv)});
    std::vector<double> ref;
    for (int i = 0; i < 12; ++i) {
      double a = xv[i], c = yv[(i / 3) % 2];  // B runs along dim 1
      std::string o = op;
      ref.push_back(o == "Add" ? a + c : o == "Sub" ? a - c : o == "Mul" ? a * c : o == "Div" ? a / c : std::pow(a, c));
    }
    std::vector<double> got = floats(out[0]);
    ASSERT_EQ(got.size(), ref.size()) << op;
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-5 * std::abs(ref[i])) << op << " element " << i;
  }
}

TEST(LegacyOpset, BinaryOpsDefaultToTrailingDimsAndBroadcastSymbolicOnes) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {2, 3});
  auto y = b.input("y", DType::F32, {Dim::symbol("m")});  // 1 at run time
  b.output(b.op("Add", {x, y}, {{"broadcast", attr_int(1)}, {"consumed_inputs", attr_ints({0, 0})}}));
  auto out = jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({1}, {10})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{11, 12, 13, 14, 15, 16}));
}

TEST(LegacyOpset, WithoutBroadcastTheShapesMustMatch) {
  GraphBuilder b(6);
  auto x = b.input("x", DType::F32, {2, 3});
  auto y = b.input("y", DType::F32, {3});
  b.output(b.op("Mul", {x, y}));
  expect_run_error(b.build(), {iota_f32({2, 3}), iota_f32({3})}, "Mul_0", "without broadcast=1, A and B need the same rank");
}

TEST(LegacyOpset, PReluSlopeRunsAlongTheChannelsBeforeOpset7) {
  GraphBuilder b(6);
  auto x = b.input("x", DType::F32, {n, 2, 2});
  auto s = b.input("s", DType::F32, {2});
  b.output(b.op("PRelu", {x, s}));
  auto out = jit_eval(b.build(), {f32({1, 2, 2}, {-1, 2, -3, 4}), f32({2}, {0.5f, 0.25f})});
  // Channel 0 by 0.5, channel 1 by 0.25 (from opset 7 the slope would run along the last dim).
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-0.5, 2, -0.75, 4}));
}

TEST(LegacyOpset, CastNamesItsTypeBeforeOpset6) {
  GraphBuilder b(1);
  auto x = b.input("x", DType::F32, {n});
  b.output(b.op("Cast", {x}, {{"to", attr_string("INT32")}}));
  auto out = jit_eval(b.build(), {f32({3}, {1.75f, -2.5f, 3})});
  EXPECT_EQ(out[0].dtype, DType::I32);
  EXPECT_EQ(out[0].to_int64(), (std::vector<int64_t>{1, -2, 3}));

  GraphBuilder bad(5);
  auto y = bad.input("x", DType::F32, {n});
  bad.output(bad.op("Cast", {y}, {{"to", attr_string("REAL")}}));
  expect_run_error(bad.build(), {iota_f32({2})}, "Cast_0", "unknown 'to' type 'REAL'");
}

TEST(LegacyOpset, BatchNormalizationOfOpset5TakesItsOldAttributes) {
  GraphBuilder b(5);
  auto x = b.input("x", DType::F32, {n, 2, 2});
  std::vector<std::string> p;
  for (const char *name : {"scale", "bias", "mean", "var"}) p.push_back(b.input(name, DType::F32, {2}));
  b.output(b.op("BatchNormalization", {x, p[0], p[1], p[2], p[3]},
                {{"consumed_inputs", attr_ints({0, 0, 0, 1, 1})}, {"is_test", attr_int(1)}, {"epsilon", attr_float(0)}}));
  auto out = jit_eval(b.build(), {f32({1, 2, 2}, {1, 3, 5, 9}), f32({2}, {2, 1}), f32({2}, {0, 1}), f32({2}, {2, 5}),
                                  f32({2}, {1, 4})});
  // (x - mean) / sqrt(var) * scale + bias per channel.
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-2, 2, 1, 3}));
}

TEST(LegacyOpset, BatchNormalizationWithSpatialZeroNormalizesEachActivation) {
  GraphBuilder b(7);
  auto x = b.input("x", DType::F32, {n, 2, 2});
  std::vector<std::string> p;
  for (const char *name : {"scale", "bias", "mean", "var"}) p.push_back(b.input(name, DType::F32, {2, 2}));
  b.output(b.op("BatchNormalization", {x, p[0], p[1], p[2], p[3]}, {{"spatial", attr_int(0)}, {"epsilon", attr_float(0)}}));
  auto out = jit_eval(b.build(), {f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({2, 2}, {1, 2, 3, 4}),
                                  f32({2, 2}, {0, 0, 1, 1}), f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 4, 1, 4})});
  // Element (c, w) of each batch row by its own scale, bias, mean and var.
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 0, 1, 1, 4, 4, 13, 9}));
}

}  // namespace
}  // namespace disco
