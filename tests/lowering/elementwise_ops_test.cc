#include <gtest/gtest.h>

#include <cmath>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim n = Dim::symbol("n");

TEST(ElementwiseOps, AddBroadcastsARowOverSymbolicRows) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), 3});
  auto y = b.input("y", DType::F32, {3});
  b.output(b.op("Add", {x, y}));
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_LE(testing::closeness(out[0], f32({2, 3}, {11, 22, 33, 14, 25, 36})), 1.0);
}

TEST(ElementwiseOps, SymbolicDimOfOneBroadcastsAtRunTime) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("a"), Dim::symbol("b")});
  auto y = b.input("y", DType::F32, {Dim::symbol("c"), Dim::symbol("d")});
  b.output(b.op("Mul", {x, y}));
  auto out = testing::jit_eval(b.build(), {f32({2, 1}, {2, 3}), f32({1, 3}, {1, 10, 100})});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_LE(testing::closeness(out[0], f32({2, 3}, {2, 20, 200, 3, 30, 300})), 1.0);
}

TEST(ElementwiseOps, IntegerDivTruncatesTowardZeroForEverySignAndGivesZeroForAZeroDivisor) {
  // ONNX's (C's) quotients, worked out by hand; Halide's own / is Euclidean.
  GraphBuilder b;
  auto x = b.input("x", DType::I64, {n});
  auto y = b.input("y", DType::I64, {n});
  b.output(b.op("Div", {x, y}));
  auto out = testing::jit_eval(b.build(), {i64({7}, {7, -7, 7, -7, 6, -6, 5}), i64({7}, {-2, -2, 2, 2, -3, 3, 0})});
  EXPECT_EQ(out[0].to_int64(), (std::vector<int64_t>{-3, 3, 3, -3, -2, -2, 0}));
}

TEST(ElementwiseOps, IntegerDivOfShapeValuesTruncatesAsItsConstantsDo) {
  // (n - 8) / 2, n / -4 and (n - 9) / 4 of x's length n, read from its shape:
  // C's (ONNX's) quotients at n = 5 are -1, -1, -1 (flooring gave -2 each),
  // and at n = 12: 2, -3, 0. They size a Slice too: x[: 6 + (n - 8) / 2].
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {n});
  auto len = b.op("Shape", {x});
  auto k = [&](int64_t v) { return b.constant("k" + std::to_string(v), i64({1}, {v})); };
  auto q1 = b.op("Div", {b.op("Sub", {len, k(8)}), k(2)});
  b.output(b.op("Concat", {q1, b.op("Div", {len, k(-4)}), b.op("Div", {b.op("Sub", {len, k(9)}), k(4)})},
                attrs({{"axis", attr_int(0)}})));
  b.output(b.op("Slice", {x, k(0), b.op("Add", {q1, k(6)})}));
  Graph g = b.build();
  auto at5 = testing::jit_eval(g, {f32({5}, 1.0f, 0)});
  EXPECT_EQ(at5[0].to_int64(), (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(at5[1].shape, (std::vector<int64_t>{5}));
  auto at12 = testing::jit_eval(g, {f32({12}, 1.0f, 0)});
  EXPECT_EQ(at12[0].to_int64(), (std::vector<int64_t>{2, -3, 0}));
  EXPECT_EQ(at12[1].shape, (std::vector<int64_t>{8}));
}

TEST(ElementwiseOps, MismatchedDimsFailWithTheNodeNamed) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("a")});
  auto y = b.input("y", DType::F32, {Dim::symbol("c")});
  b.output(b.op("Sub", {x, y}));
  Graph g = b.build();
  expect_error_naming([&] { testing::jit_eval(g, {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}); }, "Sub_0");
}

TEST(ElementwiseOps, FloatOnlyOpsOfAnIntegerNameTheNode) {
  // ONNX defines Sqrt, Exp, ... on floats alone; an int64 Sqrt (PyTorch's
  // export of sqrt of a shape value) computed sqrt(128) as 11.
  for (const char *op : {"Sqrt", "Exp", "Log", "Reciprocal"}) {
    GraphBuilder b;
    auto x = b.input("x", DType::I64, {n});
    b.output(b.op(op, {x}));
    Graph g = b.build();
    expect_error_naming([&] { testing::jit_eval(g, {i64({1}, {128})}); }, std::string(op) + "_0",
                        "input must be a float tensor");
  }
}

TEST(ElementwiseOps, ErfMatchesTheLibm) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n")});
  b.output(b.op("Erf", {x}));
  std::vector<float> in, ref;
  for (int i = -40; i <= 40; ++i) {
    in.push_back(i * 0.1f);
    ref.push_back(std::erf(i * 0.1f));
  }
  auto out = testing::jit_eval(b.build(), {f32({81}, in)});
  EXPECT_LE(testing::closeness(out[0], f32({81}, ref), 1e-5, 1e-6), 1.0);
}

// Opset 20's Gelu: x Phi(x) by default, its tanh approximation on request.
TEST(ElementwiseOps, GeluHasItsErfAndItsTanhForm) {
  for (const char *approximate : {"none", "tanh"}) {
    GraphBuilder b(20);
    auto x = b.input("x", DType::F32, {Dim::symbol("n")});
    b.output(b.op("Gelu", {x}, testing::attrs({{"approximate", attr_string(approximate)}})));
    std::vector<float> in, ref;
    for (int i = -60; i <= 60; ++i) {
      const double v = i * 0.1;
      in.push_back(static_cast<float>(v));
      ref.push_back(static_cast<float>(std::string(approximate) == "tanh"
                                           ? 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                                           : 0.5 * v * std::erfc(-v / std::sqrt(2.0))));
    }
    auto out = testing::jit_eval(b.build(), {f32({121}, in)});
    EXPECT_LE(testing::closeness(out[0], f32({121}, ref), 1e-5, 1e-7), 1.0) << approximate;
  }
}

// A constant integer exponent in [-2, 4] is multiplies, negative bases
// included; any other exponent is powf's.
TEST(ElementwiseOps, PowByAConstantHandlesNegativeBasesAndFractions) {
  const std::vector<float> base = {-3, -1.5f, -0.5f, 0, 0.5f, 2, 10};
  for (float e : {-2.0f, -1.0f, 0.0f, 2.0f, 3.0f, 4.0f, 5.0f, 0.5f, -1.5f}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {Dim::symbol("n")});
    b.output(b.op("Pow", {x, b.constant("e", f32({}, {e}))}));
    auto out = testing::jit_eval(b.build(), {f32({7}, base)});
    for (size_t i = 0; i < base.size(); ++i) {
      const float want = std::pow(base[i], e), got = out[0].as<float>()[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << base[i] << "^" << e;
      } else if (std::isinf(want)) {
        EXPECT_EQ(got, want) << base[i] << "^" << e;
      } else {
        EXPECT_NEAR(got, want, 1e-6f * std::fabs(want)) << base[i] << "^" << e;
      }
    }
  }
}

TEST(ElementwiseOps, IntegerPowIsExactAndWrapsAsPyTorch) {
  // torch.pow of int64 tensors gives these (Python's pow(a, e) mod 2^64, as
  // a signed value): (2^31 + 5)^2 fits but is past float64's 2^53; the rest
  // wrap. A negative exponent truncates 1 / a^-e (torch.pow: 1, -1, 1, 0).
  GraphBuilder b;
  auto x = b.input("x", DType::I64, {n});
  auto e = b.input("e", DType::I64, {n});
  b.output(b.op("Pow", {x, e}));
  auto out = testing::jit_eval(b.build(), {i64({12}, {(int64_t(1) << 31) + 5, 3, 3, -7, 2, 2, 5, -3, 1, -1, -1, 2}),
                                           i64({12}, {2, 41, 40, 21, 63, 64, 100, 37, -3, -3, -4, -1})});
  EXPECT_EQ(out[0].to_int64(),
            (std::vector<int64_t>{4611686039902224409, -420491770248316829, -6289078614652622815, -558545864083284007,
                                  kIntMin, 0, -3842938066129721103, -450283905890997363, 1, -1, 1, 0}));
}

TEST(ElementwiseOps, IntegerPowOfInt32Wraps) {
  // torch.pow of int32 tensors: 3^21, 7^12, (-5)^15 and 46341^2 wrap.
  GraphBuilder b;
  auto x = b.input("x", DType::I32, {n});
  auto e = b.input("e", DType::I32, {n});
  b.output(b.op("Pow", {x, e}));
  auto out = testing::jit_eval(b.build(), {i32({4}, {3, 7, -5, 46341}), i32({4}, {21, 12, 15, 2})});
  EXPECT_EQ(out[0].to_int64(), (std::vector<int64_t>{1870418611, 956385313, -452807053, -2147479015}));
}

// ---- Clip, Min, Max, Sum, Mean ----------------------------------------------

TEST(ElementwiseOps, ClipBeforeOpset11UsesAttributes) {
  GraphBuilder b(6);
  auto x = b.input("x", DType::F32, {n});
  b.output(b.op("Clip", {x}, attrs({{"min", attr_float(-1)}, {"max", attr_float(1)}})));
  auto out = testing::jit_eval(b.build(), {f32({4}, {-3, -0.5f, 0.5f, 3})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-1, -0.5, 0.5, 1}));
}

TEST(ElementwiseOps, ClipSinceOpset11TakesOptionalBoundInputs) {
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

TEST(ElementwiseOps, VariadicMinMaxSumMeanBroadcast) {
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
