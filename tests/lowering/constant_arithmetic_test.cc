// Constant folding by evaluation (lowering/constant_arithmetic.h): integer
// arithmetic, float +, -, *, /, comparisons, Pow, Where, Cast, Mod, and ScatterND
// and ConstantOfShape (folded by a copy and a fill), folded during shape
// inference, give the values written out here (C++'s own float32 operations
// for the float cases), and the C++ folds themselves (not the JIT path they
// replace) make them. Elements the kernel defines differently (a division by
// 0, a cast out of range) are left to the JIT.
#include "lowering/constant_arithmetic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "frontend/graph_builder.h"
#include "lowering/constant_copies.h"
#include "lowering/infer_context.h"
#include "lowering/op_registry.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers
using Dims = std::vector<int64_t>;

// The graph `build(b)` makes, with its shapes inferred (which folds its nodes).
template <class Build>
Graph inferred(Build build, ShapeStore &store, int opset = 17) {
  GraphBuilder b(opset);
  b.output(build(b));
  Graph g = b.build();
  infer_shapes(g, store);
  return g;
}

const Node &producer_of_output(const Graph &g) {
  for (const auto &n : g.nodes)
    if (!n.outputs.empty() && n.outputs[0] == g.outputs[0]) return n;
  throw std::runtime_error("no node makes the output");
}

// Checks the folded output and fold_by_arithmetic's own result: dtype,
// shape, and bytes equal to `want`'s.
template <class Build>
void expect_evaluated(Build build, const TensorData &want) {
  ShapeStore store;
  Graph g = inferred(build, store);
  const Value &out = g.value(g.outputs[0]);
  ASSERT_TRUE(out.constant) << "the node was not folded";
  auto evaluated = fold_by_arithmetic(g, producer_of_output(g), store);
  ASSERT_TRUE(evaluated) << producer_of_output(g).op_type << " was not folded by evaluation";
  for (const TensorData *t : std::vector<const TensorData *>{&*out.constant, &*evaluated}) {
    EXPECT_EQ(t->dtype, want.dtype);
    EXPECT_EQ(t->shape, want.shape);
    ASSERT_EQ(t->num_bytes(), want.num_bytes());
    EXPECT_EQ(std::memcmp(t->data(), want.data(), want.num_bytes()), 0) << producer_of_output(g).op_type;
  }
}

// Checks that fold_by_arithmetic leaves the graph's node to the JIT.
template <class Build>
void expect_left_to_the_jit(Build build) {
  ShapeStore store;
  Graph g = inferred(build, store);
  EXPECT_FALSE(fold_by_arithmetic(g, producer_of_output(g), store)) << producer_of_output(g).op_type;
}

TEST(ConstantArithmetic, IntegerArithmeticBroadcastsAndWraps) {
  // [2, 3] + [3]; int64's largest value + 1 wraps to its smallest.
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Add",
                    {b.constant("a", i64({2, 3}, {1, 2, 3, 4, 5, kIntMax})), b.constant("b", i64({3}, {10, 20, 1}))});
      },
      i64({2, 3}, {11, 22, 4, 14, 25, kIntMin}));
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Mul", {b.constant("a", i32({2}, {70000, -3})), b.constant("b", i32({1}, {70000}))});
      },
      i32({2}, {static_cast<int32_t>(int64_t(70000) * 70000 - (int64_t(1) << 32)), -210000}));
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Sub", {b.constant("a", i64({1}, {5})), b.constant("b", i64({2}, {7, -7}))});
      },
      i64({2}, {-2, 12}));
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Neg", {b.constant("a", i64({2}, {3, -4}))});
      },
      i64({2}, {-3, 4}));
  expect_evaluated([](GraphBuilder &b) { return b.op("Abs", {b.constant("a", i64({2}, {3, -4}))}); }, i64({2}, {3, 4}));
}

TEST(ConstantArithmetic, IntegerDivisionTruncatesAndLeavesDivisionByZeroToTheJit) {
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Div", {b.constant("a", i64({4}, {-7, 7, -7, 7})), b.constant("b", i64({4}, {2, -2, -2, 2}))});
      },
      i64({4}, {-3, -3, 3, 3}));
  expect_left_to_the_jit([](GraphBuilder &b) {
    return b.op("Div", {b.constant("a", i64({2}, {1, 2})), b.constant("b", i64({2}, {1, 0}))});
  });
}

TEST(ConstantArithmetic, ModTakesTheDivisorsSignOrWithFmodTheDividends) {
  auto build = [](int fmod) {
    return [fmod](GraphBuilder &b) {
      return b.op("Mod", {b.constant("a", i64({4}, {-7, 7, -7, 7})), b.constant("b", i64({4}, {3, -3, -3, 3}))},
                  attrs({{"fmod", attr_int(fmod)}}));
    };
  };
  expect_evaluated(build(0), i64({4}, {2, -2, -1, 1}));  // Python's
  expect_evaluated(build(1), i64({4}, {-1, 1, -1, 1}));  // C's
  expect_left_to_the_jit([](GraphBuilder &b) {
    return b.op("Mod", {b.constant("a", i64({1}, {5})), b.constant("b", i64({1}, {0}))});
  });
}

TEST(ConstantArithmetic, FloatArithmeticRoundsAsFloat32Does) {
  const std::vector<float> a{1.0f, 0.1f, 3.0e38f, -2.5f}, b{3.0f, 0.2f, 3.0e38f, 0.0f};
  std::vector<float> sum, quotient, product;
  for (size_t i = 0; i < a.size(); ++i) {
    sum.push_back(a[i] + b[i]);  // 3e38 + 3e38 overflows to inf
    quotient.push_back(a[i] / b[i]);
    product.push_back(a[i] * b[i]);
  }
  auto op = [&](const char *name) {
    return [&, name](GraphBuilder &g) {
      return g.op(name, {g.constant("a", f32({4}, a)), g.constant("b", f32({4}, b))});
    };
  };
  expect_evaluated(op("Add"), f32({4}, sum));
  expect_evaluated(op("Div"), f32({4}, quotient));
  expect_evaluated(op("Mul"), f32({4}, product));
}

TEST(ConstantArithmetic, PowOfAFloatBaseTakesFloatOrIntegerExponentsAndLeavesIntegerBasesToTheJit) {
  const float inf = std::numeric_limits<float>::infinity();
  // A transformer's head_dim ** -0.5 first; 1 / sqrt(32) = 0.17677669529663688...
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op(
            "Pow", {b.constant("a", f32({5}, {32, 2, -8, 0, 4})), b.constant("b", f32({5}, {-0.5f, 10, 3, -1, 0.5f}))});
      },
      f32({5}, {0.17677669529663688f, 1024, -512, inf, 2}));
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Pow", {b.constant("a", f32({2}, {2, 3})), b.constant("b", i64({2}, {3, -2}))});
      },
      f32({2}, {8, 1.0f / 9.0f}));
  expect_left_to_the_jit([](GraphBuilder &b) {
    return b.op("Pow", {b.constant("a", i64({1}, {2})), b.constant("b", i64({1}, {3}))});
  });
}

TEST(ConstantArithmetic, ComparisonsAndLogicalOpsGiveBools) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_evaluated(
      [&](GraphBuilder &b) {
        return b.op("Equal",
                    {b.constant("a", f32({3}, {1.0f, nan, -0.0f})), b.constant("b", f32({3}, {1.0f, nan, 0.0f}))});
      },
      boolean({3}, {1, 0, 1}));
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Less", {b.constant("a", i64({3}, {1, 5, -9})), b.constant("b", i64({1}, {2}))});
      },
      boolean({3}, {1, 0, 1}));
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Not", {b.op("Greater", {b.constant("a", i64({2}, {1, 5})), b.constant("b", i64({1}, {2}))})});
      },
      boolean({2}, {1, 0}));
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Xor", {b.constant("a", boolean({4}, {0, 0, 1, 1})), b.constant("b", boolean({4}, {0, 1, 0, 1}))});
      },
      boolean({4}, {0, 1, 1, 0}));
}

TEST(ConstantArithmetic, WhereBroadcastsItsThreeInputs) {
  // cond [2, 1], x [1, 3], y a scalar.
  expect_evaluated(
      [](GraphBuilder &b) {
        return b.op("Where", {b.constant("c", boolean({2, 1}, {1, 0})), b.constant("x", f32({1, 3}, {1, 2, 3})),
                              b.constant("y", f32({}, {-100.0f}))});
      },
      f32({2, 3}, {1, 2, 3, -100, -100, -100}));
}

TEST(ConstantArithmetic, CastTruncatesWrapsAndLeavesOutOfRangeFloatsToTheJit) {
  auto cast = [](TensorData in, DType to) {
    const int code = to == DType::F32 ? 1 : to == DType::U8 ? 2 : to == DType::I32 ? 6 : 9;  // ONNX's; 9: bool
    return [in, code](GraphBuilder &b) { return b.op("Cast", {b.constant("a", in)}, attrs({{"to", attr_int(code)}})); };
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_evaluated(cast(f32({3}, {-2.7f, 2.7f, -0.5f}), DType::I32), i32({3}, {-2, 2, 0}));
  expect_evaluated(cast(f32({4}, {0.0f, -0.0f, nan, 0.5f}), DType::Bool), boolean({4}, {0, 0, 1, 1}));
  expect_evaluated(cast(i64({2}, {(int64_t(1) << 24) + 1, -7}), DType::F32), f32({2}, {16777216.0f, -7.0f}));
  expect_evaluated(cast(i64({2}, {300, -1}), DType::U8), TensorData::from_ints(DType::U8, {44, 255}, {2}));
  expect_left_to_the_jit(cast(f32({1}, {300.0f}), DType::U8));
  expect_left_to_the_jit(cast(f32({1}, {nan}), DType::I32));
}

TEST(ConstantArithmetic, ScatterNdWritesSlicesInOrderAndLeavesOutOfRangeIndicesToTheJit) {
  // Rows 1, -1 (3) and 1 again of a [4, 2]: the last write to row 1 wins.
  auto scatter = [](std::vector<int64_t> rows) {
    return [rows](GraphBuilder &b) {
      return b.op("ScatterND",
                  {b.constant("d", i64({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7})), b.constant("i", i64({3, 1}, rows)),
                   b.constant("u", i64({3, 2}, {10, 11, 30, 31, 12, 13}))});
    };
  };
  ShapeStore store;
  Graph g = inferred(scatter({1, -1, 1}), store);
  ASSERT_TRUE(g.value(g.outputs[0]).constant);
  EXPECT_EQ(g.value(g.outputs[0]).constant->to_int64(), (std::vector<int64_t>{0, 1, 12, 13, 4, 5, 30, 31}));
  auto copied = fold_by_copy(g, producer_of_output(g), store);
  ASSERT_TRUE(copied) << "ScatterND was not folded by a copy";
  EXPECT_EQ(copied->to_int64(), (std::vector<int64_t>{0, 1, 12, 13, 4, 5, 30, 31}));
  ShapeStore store2;
  Graph bad = inferred(scatter({1, 4, 1}), store2);
  EXPECT_FALSE(fold_by_copy(bad, producer_of_output(bad), store2));
}

TEST(ConstantArithmetic, LegacyBroadcastAtAnAxisIsLeftToTheJit) {
  // Opset 6: B [2] aligned at axis 0 of A [2, 2] (numpy's way would align it at axis 1).
  ShapeStore store;
  Graph g = inferred(
      [](GraphBuilder &b) {
        return b.op("Add", {b.constant("a", i64({2, 2}, {1, 2, 3, 4})), b.constant("b", i64({2}, {10, 20}))},
                    attrs({{"broadcast", attr_int(1)}, {"axis", attr_int(0)}}));
      },
      store, 6);
  ASSERT_TRUE(g.value(g.outputs[0]).constant);
  EXPECT_EQ(g.value(g.outputs[0]).constant->to_int64(), (std::vector<int64_t>{11, 12, 23, 24}));
  EXPECT_FALSE(fold_by_arithmetic(g, producer_of_output(g), store));
}

TEST(ConstantArithmetic, ConstantOfShapeFillsPastSixtyFourElementsInItsOwnInference) {
  // The op's inference alone (no constant folding after it) makes the constant.
  GraphBuilder b(17);
  b.output(b.op("ConstantOfShape", {b.constant("s", i64({2}, {10, 30}))},
                attrs({{"value", attr_tensor(f32({1}, {2.5f}))}})));
  Graph g = b.build();
  ShapeStore store;
  const OpDef *def = OpRegistry::global().find("", "ConstantOfShape", 17);
  ASSERT_TRUE(def);
  InferContext ctx(g, static_cast<int>(g.nodes.size()) - 1, store, *def);
  def->infer(ctx);
  const Value &out = g.value(g.outputs[0]);
  ASSERT_TRUE(out.constant);
  EXPECT_EQ(out.constant->shape, (Dims{10, 30}));
  EXPECT_EQ(floats(*out.constant), std::vector<double>(300, 2.5));
}

}  // namespace
}  // namespace disco
