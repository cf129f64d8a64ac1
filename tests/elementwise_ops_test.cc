#include <gtest/gtest.h>

#include <cmath>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::expect_error_naming;
using testing::f32;

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

TEST(ElementwiseOps, MismatchedDimsFailWithTheNodeNamed) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("a")});
  auto y = b.input("y", DType::F32, {Dim::symbol("c")});
  b.output(b.op("Sub", {x, y}));
  Graph g = b.build();
  expect_error_naming([&] { testing::jit_eval(g, {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}); }, "Sub_0");
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

}  // namespace
}  // namespace disco
