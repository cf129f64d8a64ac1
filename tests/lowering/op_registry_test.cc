// The op registry: opset ranges (kAnyLaterOpset), the messages for ops it does
// not cover, and the expression each shared-family op carries (OpMath), which
// its family's inference and lowering call instead of dispatching on its name.
#include "lowering/op_registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "Halide.h"
#include "lowering/shape_store.h"

namespace disco {
namespace {

const OpDef &def(const std::string &op, int opset = 17) {
  const OpDef *d = OpRegistry::global().find("", op, opset);
  if (!d) throw std::runtime_error(op + " is not registered at opset " + std::to_string(opset));
  return *d;
}

TEST(OpRegistry, AnEntryOpenToLaterOpsetsCoversThemAll) {
  EXPECT_EQ(def("Relu").until, kAnyLaterOpset);
  EXPECT_NE(OpRegistry::global().find("", "Relu", kAnyLaterOpset), nullptr);
  EXPECT_EQ(OpRegistry::global().find("", "LessOrEqual", 11), nullptr);
}

TEST(OpRegistry, SaysWhichOpsetsAnOpCovers) {
  std::string why;
  EXPECT_EQ(OpRegistry::global().find("", "Scatter", 11, &why), nullptr);
  EXPECT_EQ(why, "op 'Scatter' is not supported at opset 11 (supported: 9-10)");
  EXPECT_EQ(OpRegistry::global().find("", "Where", 8, &why), nullptr);
  EXPECT_EQ(why, "op 'Where' is not supported at opset 8 (supported: 9+)");
  EXPECT_EQ(OpRegistry::global().find("", "NoSuchOp", 17, &why), nullptr);
  EXPECT_EQ(why, "unknown op 'NoSuchOp'");
}

TEST(OpRegistry, UnaryOpsCarryTheirExpression) {
  for (const char *op : {"Relu", "Neg", "Exp", "Erf", "Not", "Tan", "Round", "Elu", "Mish"}) {
    const auto *m = std::get_if<UnaryMath>(&def(op).math);
    ASSERT_NE(m, nullptr) << op;
    EXPECT_NE(m->expr, nullptr) << op;
  }
  // Only Neg folds shape values.
  EXPECT_NE(std::get<UnaryMath>(def("Neg").math).dims, nullptr);
  EXPECT_EQ(std::get<UnaryMath>(def("Neg").math).dims(Dim::symbol("n")), -Dim::symbol("n"));
  EXPECT_EQ(std::get<UnaryMath>(def("Relu").math).dims, nullptr);
}

TEST(OpRegistry, BinaryOpsCarryTheirExpressionAndShapeValueFold) {
  Dim n = Dim::symbol("n");
  ShapeStore st;
  EXPECT_EQ(*std::get<BinaryMath>(def("Add").math).dims(n, 2, st), n + 2);
  EXPECT_EQ(*std::get<BinaryMath>(def("Sub").math).dims(n, 2, st), n - 2);
  EXPECT_EQ(*std::get<BinaryMath>(def("Mul").math).dims(n, 3, st), n * 3);
  EXPECT_EQ(*std::get<BinaryMath>(def("Div").math).dims(n * 4, 2, st), n * 2);
  EXPECT_FALSE(std::get<BinaryMath>(def("Div").math).dims(n, 0, st));  // no fold of a division by 0
  const auto &pow = std::get<BinaryMath>(def("Pow").math);
  EXPECT_EQ(pow.dims, nullptr);
  EXPECT_FALSE(pow.same_dtypes);
  EXPECT_TRUE(std::get<BinaryMath>(def("Add").math).same_dtypes);
}

TEST(OpRegistry, DivOfShapeValuesTruncatesTowardZeroAsOnnx) {
  // ONNX Div (C's /): trunc(-3 / 2) = -1, trunc(5 / -4) = -1, trunc(-7 / 4)
  // = -1; flooring gave -2, -2 and -2.
  const Dim n = Dim::symbol("n");
  ShapeStore st;
  const auto &div = std::get<BinaryMath>(def("Div").math);
  struct Case {
    Dim x, y;
    int64_t at;
  };
  for (const Case &c : {Case{n - 8, 2, 5}, Case{n, -4, 5}, Case{n - 9, 4, 2}, Case{n - 8, 2, 12}, Case{-n, 3, 7}}) {
    const std::optional<Dim> q = div.dims(c.x, c.y, st);
    ASSERT_TRUE(q) << c.x.str() << " / " << c.y.str();
    const int64_t x = c.x.eval({{"n", c.at}}), y = c.y.eval({});
    EXPECT_EQ(q->eval({{"n", c.at}}), x / y) << c.x.str() << " / " << c.y.str() << " at n = " << c.at;
  }
  // n / 2 stays a plain floor_div: n is an extent, never negative.
  EXPECT_EQ(*div.dims(n, 2, st), floor_div(n, Dim(2)));
  // A divisor whose sign is unknown does not fold.
  EXPECT_FALSE(div.dims(n, n - 3, st));
}

TEST(OpRegistry, ComparisonsDecideFromTheSignOfTheDifference) {
  DimSign positive{false, true, false, true, false}, zero{true, false, false, true, true};
  DimSign unknown{false, false, false, false, false};
  auto decide = [](const char *op, const DimSign &s) { return std::get<CompareMath>(def(op).math).dims(s); };
  EXPECT_EQ(decide("Equal", zero), true);
  EXPECT_EQ(decide("Equal", positive), false);
  EXPECT_EQ(decide("Greater", positive), true);
  EXPECT_EQ(decide("Less", positive), false);
  EXPECT_EQ(decide("LessOrEqual", zero), true);
  EXPECT_EQ(decide("GreaterOrEqual", zero), true);
  EXPECT_EQ(decide("Equal", unknown), std::nullopt);
  // Logical ops take bools and fold nothing.
  for (const char *op : {"And", "Or", "Xor"}) EXPECT_EQ(std::get<CompareMath>(def(op).math).dims, nullptr) << op;
}

TEST(OpRegistry, ReductionsCarryTheirFold) {
  for (const char *op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum"}) {
    const auto *m = std::get_if<ReduceMath>(&def(op).math);
    ASSERT_NE(m, nullptr) << op;
    EXPECT_TRUE(m->init && m->update) << op;
  }
  EXPECT_EQ(std::string(std::get<ReduceMath>(def("ReduceL2").math).stage), "sumsq");
}

TEST(OpRegistry, OpsOutsideTheSharedFamiliesCarryNoExpression) {
  for (const char *op : {"Reshape", "MatMul", "Softmax", "Cast", "Where"})
    EXPECT_TRUE(std::holds_alternative<std::monostate>(def(op).math)) << op;
}

}  // namespace
}  // namespace disco
