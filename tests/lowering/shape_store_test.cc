// The constraint store tested directly: union-find over symbols, product
// equalities, symbol facts and the queries over them (divisibility, can-be-1,
// bounds), and run-time checks.
#include <gtest/gtest.h>

#include <limits>

#include "frontend/errors.h"
#include "lowering/shape_store.h"

namespace disco {
namespace {

const Dim b = Dim::symbol("b"), s = Dim::symbol("s"), n = Dim::symbol("n");
constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();

// ---- ShapeStore: union-find -------------------------------------------------------

TEST(ShapeStore, AssertingTwoSymbolsEqualMergesTheirClasses) {
  ShapeStore st;
  st.declare_symbol("b", "input 'x' dim 0");
  st.declare_symbol("t", "node 'MatMul_0'");
  st.assert_equal(Dim::symbol("t"), b, "matmul K");
  EXPECT_TRUE(st.same_dim(Dim::symbol("t"), b));
  // The input's symbol stays the representative, so shapes read in user names.
  EXPECT_EQ(st.canonical(Dim::symbol("t") * 2 + 1), b * 2 + 1);
  ASSERT_EQ(st.checks().size(), 1u);
  EXPECT_EQ(st.checks()[0].kind, RuntimeCheck::Equal);
  EXPECT_EQ(st.checks()[0].message, "matmul K");
}

TEST(ShapeStore, MergingIsTransitive) {
  ShapeStore st;
  for (const char *x : {"a", "c", "d"}) st.declare_symbol(x, std::string("input '") + x + "'");
  st.assert_equal(Dim::symbol("a"), Dim::symbol("c"), "1");
  st.assert_equal(Dim::symbol("c"), Dim::symbol("d"), "2");
  EXPECT_TRUE(st.same_dim(Dim::symbol("a"), Dim::symbol("d")));
  EXPECT_TRUE(st.same_shape({Dim::symbol("d"), 3}, {Dim::symbol("a"), 3}));
}

TEST(ShapeStore, ASymbolEqualToAConstantIsPinnedWithItsWholeClass) {
  ShapeStore st;
  st.declare_symbol("b", "input");
  st.declare_symbol("s", "input");
  st.assert_equal(b, s, "same");
  st.assert_equal(s, 4, "fixed");
  EXPECT_EQ(st.canonical(b * 3), Dim(12));
  EXPECT_FALSE(st.can_be_one(b));
}

TEST(ShapeStore, TwoDifferentConstantsCannotBeEqual) {
  ShapeStore st;
  try {
    st.assert_equal(Dim(3), Dim(4), "node 'Add_1' (Add): broadcast dim 0");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("Add_1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("broadcast dim 0: 3 vs 4"), std::string::npos) << e.what();
  }
}

// A side that was an expression shows it with its value; it read "64 = 64
// but 8 = 8" for two constants.
TEST(ShapeStore, UnequalConstantsShowAnExpressionWithItsValue) {
  ShapeStore st;
  st.declare_symbol("s", "input");
  st.assert_equal(Dim::symbol("s"), Dim(8), "pinned");
  try {
    st.assert_equal(Dim::symbol("s") * 8, Dim(32), "node 'MatMul_0' (MatMul): inner dims");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("inner dims: 8*s = 64 vs 32"), std::string::npos) << e.what();
  }
}

TEST(ShapeStore, StructurallyEqualDimsNeedNoCheck) {
  ShapeStore st;
  st.declare_symbol("b", "input");
  st.assert_equal(b * 2, b + b, "trivial");
  EXPECT_TRUE(st.checks().empty());
}

TEST(ShapeStore, MergingKeepsTheStrongerFacts) {
  ShapeStore st;
  st.declare_symbol("b", "input 'x' dim 0");
  st.declare_symbol("t", "node");
  st.facts("t").min = 2;
  st.facts("t").divisor = 8;
  st.assert_equal(b, Dim::symbol("t"), "merge");
  EXPECT_EQ(st.facts("b").min, 2);
  EXPECT_EQ(st.facts("b").divisor, 8);
  EXPECT_FALSE(st.can_be_one(b));
}

// ---- ShapeStore: product equalities and queries ----------------------------------------

TEST(ShapeStore, ElementCountsOfTheSameProductAreEqualWithoutFacts) {
  ShapeStore st;
  EXPECT_TRUE(st.same_num_elements({b, s, 768}, {b * s, 768}));
  EXPECT_TRUE(st.same_num_elements({b, s, 768}, {b, s, 12, 64}));
  EXPECT_FALSE(st.same_num_elements({b, s, 768}, {b, 768}));
  EXPECT_FALSE(st.same_shape({b, s, 768}, {b * s, 768}));
}

TEST(ShapeStore, AProductEqualityMakesElementCountsEqual) {
  ShapeStore st;
  const Dim t = Dim::symbol("t");
  EXPECT_FALSE(st.same_num_elements({b, s}, {t, 2}));
  st.add_product_equal(b * s, t * 2);
  EXPECT_TRUE(st.same_num_elements({b, s}, {t, 2}));
  EXPECT_TRUE(st.same_num_elements({t, 2}, {b, s}));
  // A product fact says nothing about the individual dims.
  EXPECT_FALSE(st.same_shape({b, s}, {t, 2}));
}

TEST(ShapeStore, TwoProductFactsCombine) {
  ShapeStore st;
  const Dim t = Dim::symbol("t"), u = Dim::symbol("u");
  st.add_product_equal(b * s, t);
  st.add_product_equal(t, u * 4);
  EXPECT_TRUE(st.same_num_elements({b, s}, {u, 4}));
}

TEST(ShapeStore, DivisibilityFollowsCoefficientsAndSymbolDivisors) {
  ShapeStore st;
  st.declare_symbol("b", "input");
  EXPECT_TRUE(st.is_divisible(b * 768, 256));
  EXPECT_FALSE(st.is_divisible(b * 768, 512));
  EXPECT_FALSE(st.is_divisible(b, 2));
  st.facts("b").divisor = 8;
  EXPECT_TRUE(st.is_divisible(b, 4));
  EXPECT_TRUE(st.is_divisible(b * 2, 16));
  EXPECT_FALSE(st.is_divisible(b, 16));
  EXPECT_FALSE(st.is_divisible(b + 3, 2));
  EXPECT_FALSE(st.is_divisible(b, 0));
}

TEST(ShapeStore, ASymbolCanBeOneUnlessAFactRulesItOut) {
  ShapeStore st;
  for (const char *x : {"a", "c", "d", "e"}) st.declare_symbol(x, "input");
  EXPECT_TRUE(st.can_be_one(Dim::symbol("a")));
  st.facts("c").not_one = true;
  st.facts("d").min = 2;
  st.facts("e").divisor = 4;
  EXPECT_FALSE(st.can_be_one(Dim::symbol("c")));
  EXPECT_FALSE(st.can_be_one(Dim::symbol("d")));
  EXPECT_FALSE(st.can_be_one(Dim::symbol("e")));
  EXPECT_TRUE(st.can_be_one(Dim(1)));
  EXPECT_FALSE(st.can_be_one(Dim(5)));
  EXPECT_FALSE(st.can_be_one(Dim::symbol("a") * 2));
}

TEST(ShapeStore, RunTimeChecksEvaluateTheirRelation) {
  SymbolValues v{{"b", 6}, {"s", 4}};
  EXPECT_TRUE((RuntimeCheck{RuntimeCheck::Divisible, b * s, Dim(8), "m"}).holds(v));
  EXPECT_FALSE((RuntimeCheck{RuntimeCheck::Divisible, b, Dim(4), "m"}).holds(v));
  EXPECT_TRUE((RuntimeCheck{RuntimeCheck::AtLeast, b, s, "m"}).holds(v));
  EXPECT_FALSE((RuntimeCheck{RuntimeCheck::AtLeast, s, b, "m"}).holds(v));
  EXPECT_TRUE((RuntimeCheck{RuntimeCheck::Broadcastable, b, Dim(1), "m"}).holds(v));
  EXPECT_FALSE((RuntimeCheck{RuntimeCheck::Broadcastable, b, s, "m"}).holds(v));
  EXPECT_FALSE((RuntimeCheck{RuntimeCheck::Equal, b, s, "m"}).holds(v));
  std::string text = RuntimeCheck{RuntimeCheck::Equal, b, s, "node 'X': dims"}.describe(v);
  EXPECT_NE(text.find("node 'X': dims"), std::string::npos) << text;
  EXPECT_NE(text.find("b = 6"), std::string::npos) << text;
  EXPECT_NE(text.find("s = 4"), std::string::npos) << text;
}

TEST(ShapeStore, RepeatedChecksAreRecordedOnce) {
  ShapeStore st;
  st.add_check({RuntimeCheck::Divisible, n, Dim(3), "first"});
  st.add_check({RuntimeCheck::Divisible, n, Dim(3), "second"});
  EXPECT_EQ(st.checks().size(), 1u);
}

// ---- ShapeStore: bounds from symbol facts ----------------------------------------------

TEST(ShapeStore, LowerBoundsComeFromSymbolMinimumsAndExtentsAreNonNegative) {
  ShapeStore st;
  st.declare_symbol("s", "input 'x' dim 0");
  EXPECT_EQ(st.lower_bound(s), 0) << "an extent is never negative";
  EXPECT_EQ(st.lower_bound(Dim::symbol("undeclared")), 0);
  st.facts("s").min = 3;
  EXPECT_EQ(st.lower_bound(s), 3);
  EXPECT_EQ(st.lower_bound(s - 1), 2);
  EXPECT_EQ(st.lower_bound(s * 2 + 1), 7);
  EXPECT_EQ(st.upper_bound(-s), -3);
  EXPECT_EQ(st.upper_bound(s), std::nullopt) << "symbols have no upper bound";
  EXPECT_EQ(st.lower_bound(-s), std::nullopt);
  EXPECT_EQ(st.lower_bound(Dim(-5)), -5);
  EXPECT_EQ(st.upper_bound(Dim(-5)), -5);
}

TEST(ShapeStore, BoundsFollowMergedAndPinnedSymbols) {
  ShapeStore st;
  st.declare_symbol("b", "input 'x' dim 0");
  st.declare_symbol("t", "node 'Reshape_0'");
  st.facts("t").min = 5;
  st.assert_equal(b, Dim::symbol("t"), "merge");
  EXPECT_EQ(st.lower_bound(b), 5);
  EXPECT_EQ(st.lower_bound(Dim::symbol("t")), 5);
  st.declare_symbol("s", "input 'y' dim 0");
  st.assert_equal(s, 4, "fixed");
  EXPECT_EQ(st.lower_bound(s), 4);
  EXPECT_EQ(st.upper_bound(s), 4);
}

TEST(ShapeStore, BoundsOfDivModMinAndMax) {
  ShapeStore st;
  st.declare_symbol("s", "input");
  st.facts("s").min = 3;
  EXPECT_EQ(st.lower_bound(floor_mod(s, 4)), 0);
  EXPECT_EQ(st.upper_bound(floor_mod(s, 4)), 3);
  EXPECT_EQ(st.lower_bound(floor_div(s, 2)), 1);
  EXPECT_EQ(st.upper_bound(floor_div(s, 2)), std::nullopt);
  EXPECT_EQ(st.lower_bound(floor_div(s, n)), std::nullopt) << "a symbolic divisor gives no bound";
  // min(x, y) <= y bounds it above by y alone; max(x, y) >= y below.
  EXPECT_EQ(st.upper_bound(min(s, 5)), 5);
  EXPECT_EQ(st.lower_bound(min(s, 5)), 3);
  EXPECT_EQ(st.lower_bound(max(s, 5)), 5);
  EXPECT_EQ(st.upper_bound(max(s, 5)), std::nullopt);
}

TEST(ShapeStore, ProductBoundsNeedNonNegativeFactors) {
  ShapeStore st;
  for (const char *x : {"s", "n"}) st.declare_symbol(x, "input");
  st.facts("s").min = 3;
  st.facts("n").min = 2;
  EXPECT_EQ(st.lower_bound(s * n), 6);
  EXPECT_EQ(st.lower_bound(s * s - s), std::nullopt) << "-s has no lower bound";
  EXPECT_EQ(st.lower_bound(s * max(n, Dim(-1))), 6);
  // s * min(n, -1) can be far below 3 * -1: a factor that may be negative gives no bound.
  EXPECT_EQ(st.lower_bound(s * min(n, Dim(-1))), std::nullopt);
}

TEST(ShapeStore, BoundsThatWouldOverflowAreUnknown) {
  ShapeStore st;
  st.declare_symbol("s", "input");
  st.facts("s").min = 3;
  EXPECT_EQ(st.lower_bound(s + kIntMax), std::nullopt);
  EXPECT_EQ(st.lower_bound(s * kIntMax), std::nullopt);
}

TEST(ShapeStore, NonNegativityNeedsAProof) {
  ShapeStore st;
  st.declare_symbol("s", "input");
  st.facts("s").min = 3;
  EXPECT_TRUE(st.is_nonnegative(s - 3));
  EXPECT_FALSE(st.is_nonnegative(s - 4));
  EXPECT_FALSE(st.is_nonnegative(-s)) << "no bound is no proof";
}

TEST(ShapeStore, MinAndMaxSimplifyWhenTheBoundsDecide) {
  ShapeStore st;
  st.declare_symbol("s", "input");
  EXPECT_EQ(st.simplify_max(s - 1, -1), s - 1);
  EXPECT_EQ(st.simplify_max(Dim(-1), s - 1), s - 1);
  EXPECT_EQ(st.simplify_min(s, s + 2), s);
  EXPECT_EQ(st.simplify_min(s + 2, s), s);
  EXPECT_EQ(st.simplify_min(s, 5), min(s, 5)) << "s may be below or above 5";
  EXPECT_EQ(st.simplify_max(s, 5), max(s, 5));
  st.facts("s").min = 7;
  EXPECT_EQ(st.simplify_min(s, 5), Dim(5));
  EXPECT_EQ(st.simplify_max(s, 5), s);
}

}  // namespace
}  // namespace disco
