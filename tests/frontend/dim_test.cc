#include "frontend/dim.h"

#include <gtest/gtest.h>

#include "frontend/errors.h"

namespace disco {
namespace {

const Dim b = Dim::symbol("batch"), s = Dim::symbol("seq"), h = Dim::symbol("H");

TEST(Dim, ProductsAreCommutativeAndPrintedCanonically) {
  EXPECT_EQ(b * s * 768, Dim(768) * s * b);
  EXPECT_EQ((b * s).str(), "batch*seq");
  EXPECT_EQ((b * s * 768 + 3).str(), "768*batch*seq + 3");
}

TEST(Dim, ConstantsFold) {
  EXPECT_TRUE((Dim(3) * 4 - 12).is_const(0));
  EXPECT_EQ(floor_div(Dim(-7), Dim(2)).as_const(), -4);
  EXPECT_EQ(floor_mod(Dim(-7), Dim(2)).as_const(), 1);
}

TEST(Dim, ExactDivisionCancels) {
  EXPECT_EQ(floor_div(b * s * 768, Dim(768)), b * s);
  EXPECT_EQ(floor_div(b * s * 768, s * 768), b);
  EXPECT_TRUE(floor_mod(b * 768, Dim(256)).is_const(0));
}

TEST(Dim, DivisionByASumCancelsAConstantMultiple) {
  // RetinaNet's A = HWA // HW, HWA = 9 * HW summed over levels (hand reference: 9, remainder 0).
  const Dim hw = b * s + h * h + floor_div(h + 1, Dim(2)) * s;
  EXPECT_EQ(floor_div(hw * 9, hw), Dim(9));
  EXPECT_TRUE(floor_mod(hw * 9, hw).is_const(0));
  EXPECT_FALSE(floor_div(hw * 9 + 1, hw).is_const());
}

TEST(Dim, ConvOutputSizeSimplifies) {
  // (H + 2*1 - 3)/1 + 1 == H
  EXPECT_EQ(floor_div(h + 2 - 3, Dim(1)) + 1, h);
  // stride 2 keeps one floor-div atom
  Dim o = floor_div(h + 2 - 3, Dim(2)) + 1;
  EXPECT_FALSE(o.is_const());
  EXPECT_EQ(o.eval({{"H", 40}}), 20);
  EXPECT_EQ(o.eval({{"H", 41}}), 21);
}

TEST(Dim, MinMaxFoldWhenTheDifferenceIsConstant) {
  EXPECT_EQ(min(s, s + 3), s);
  EXPECT_EQ(max(s, s + 3), s + 3);
  EXPECT_EQ(min(s, b), min(b, s));
}

TEST(Dim, AMinPlusTheMaxOfTheSameArgumentsShiftedIsTheirSum) {
  // A roll as x[-3:] ++ x[:-3]: min(3, n) + max(0, n - 3) rows, which is n.
  EXPECT_EQ(min(Dim(3), s) + max(Dim(0), s - 3), s);
  EXPECT_EQ(max(s - 3, Dim(0)) + min(s, Dim(3)), s);
  // min(A, B) + max(A, B) = A + B, also inside a larger sum and with a
  // coefficient; with differing coefficients or shifts it stays.
  EXPECT_EQ(2 * min(b, s) + 2 * max(b, s) + h, 2 * b + 2 * s + h);
  EXPECT_NE((min(b + 1, s) + max(b, s - 2)).str().find("min"), std::string::npos);  // shifts 1 and 2
  for (int64_t n : {0, 2, 3, 7}) EXPECT_EQ((min(Dim(3), s) + max(Dim(0), s - 3)).eval({{"seq", n}}), n);
}

TEST(Dim, ASumDistributesIntoAMinOrMaxWhereItsTermsCancel) {
  // x[-t:] over n rows, t > 0 at run time: n - max(n - t, 0) rows, min(t, n).
  EXPECT_EQ(s - max(s - h, Dim(0)), min(h, s));
  // With a coefficient, and a min turned into a max by a negative one.
  EXPECT_EQ(2 * s - 2 * max(s - h, Dim(0)), min(2 * h, 2 * s));
  EXPECT_EQ(s - min(s - h, Dim(1)), max(h, s - 1));
  EXPECT_EQ(b + min(h - b, Dim(4) - b), min(h, Dim(4)));
  // Nothing cancels: the sum stays as written.
  EXPECT_NE((s - max(b, Dim(0))).str().find("max"), std::string::npos);
  EXPECT_NE((s + min(b, h)).str().find("min"), std::string::npos);
  for (int64_t n : {0, 2, 3, 7})
    for (int64_t t : {1, 3, 9}) EXPECT_EQ((s - max(s - h, Dim(0))).eval({{"seq", n}, {"H", t}}), std::min(t, n));
}

TEST(Dim, EvaluatesAndReportsMissingSymbols) {
  EXPECT_EQ((b * s + 1).eval({{"batch", 2}, {"seq", 5}}), 11);
  EXPECT_THROW((b * s).eval({{"batch", 2}}), Error);
}

TEST(Dim, SubstitutesSymbols) {
  Dim d = (b * s + s).substitute([](const std::string &n) -> std::optional<Dim> {
    if (n == "seq") return Dim(4);
    return std::nullopt;
  });
  EXPECT_EQ(d, b * 4 + 4);
}

}  // namespace
}  // namespace disco
