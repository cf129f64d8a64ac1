// Symbols by slot (runtime/symbol_slots.h): a dim compiled over a symbol
// table evaluates to the values worked out by hand here, fails as Dim::eval
// does, and a run's bindings know what is bound.
#include "runtime/symbol_slots.h"

#include <gtest/gtest.h>

#include "frontend/errors.h"

namespace disco {
namespace {

const Dim b = Dim::symbol("batch"), s = Dim::symbol("seq len"), h = Dim::symbol("H");

std::string eval_error(const SlotDim &d, const BoundSymbols &v) {
  try {
    d.eval(v);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(SymbolTable, ANameKeepsItsSlot) {
  SymbolTable t;
  EXPECT_EQ(t.slot("a"), 0);
  EXPECT_EQ(t.slot("b"), 1);
  EXPECT_EQ(t.slot("a"), 0);
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(t.name(1), "b");
  EXPECT_EQ(t.find("b"), 1);
  EXPECT_EQ(t.find("c"), std::nullopt);
}

TEST(SlotDim, EvaluatesByHandWorkedValues) {
  auto table = std::make_shared<SymbolTable>();
  // batch = 3, seq len = 5, H = 7.
  const std::vector<std::pair<Dim, int64_t>> cases = {
      {Dim(0), 0},
      {Dim(-3), -3},
      {b, 3},
      {b * 2 - 1, 5},
      {b * s * 768 + 1, 11521},
      {floor_div(h - 1, Dim(2)) + 1, 4},
      {min(b, s) * max(h, b + 2), 21},
      {floor_mod(b * 3 + 1, Dim(4)), 2},
      {floor_div(-h, Dim(2)), -4},
      {floor_mod(-h, Dim(4)), 1},
      {ceil_div(b * s, h), 3},
  };
  std::vector<SlotDim> compiled;
  for (const auto &c : cases) compiled.emplace_back(c.first, *table);
  BoundSymbols v(table);
  v.set(*table->find("batch"), 3);
  v.set(*table->find("seq len"), 5);
  v.set(*table->find("H"), 7);
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(compiled[i].eval(v), cases[i].second) << cases[i].first.str();
}

TEST(SlotDim, DeepExpressionsEvaluateAsDimsDo) {
  // Nested divisions need a deep evaluation stack; Dim::eval is the reference.
  Dim d = b + 1;
  for (int k = 0; k < 40; ++k) d = floor_div(Dim(1000 + k) * s, d + h) + k;
  SymbolTable table;
  const SlotDim compiled(d, table);
  BoundSymbols v(std::make_shared<SymbolTable>(table));
  v.set(*table.find("batch"), 3);
  v.set(*table.find("seq len"), 5);
  v.set(*table.find("H"), 7);
  EXPECT_EQ(compiled.eval(v), d.eval({{"batch", 3}, {"seq len", 5}, {"H", 7}}));
}

TEST(SlotDim, ErrorsNameTheSymbolOrTheDivision) {
  auto table = std::make_shared<SymbolTable>();
  const SlotDim sum(b + s, *table), div(floor_div(h, b), *table), mod(floor_mod(h, b), *table);
  BoundSymbols v(table);
  v.set(*table->find("batch"), 0);
  v.set(*table->find("H"), 7);
  EXPECT_EQ(eval_error(sum, v), "symbol 'seq len' has no value");
  EXPECT_NE(eval_error(div, v).find("division by zero evaluating"), std::string::npos) << eval_error(div, v);
  EXPECT_NE(eval_error(mod, v).find("modulo by zero evaluating"), std::string::npos) << eval_error(mod, v);
  EXPECT_FALSE(sum.bound_in(v));
  EXPECT_TRUE(div.bound_in(v));
}

TEST(SlotDim, OnlyABareSymbolHasASlot) {
  SymbolTable t;
  t.slot("batch");
  const SlotDim seq(s, t);
  EXPECT_EQ(seq.symbol_slot(), 1);
  EXPECT_EQ(SlotDim(s * 2, t).symbol_slot(), -1);
  EXPECT_EQ(SlotDim(Dim(4), t).symbol_slot(), -1);
  EXPECT_EQ(SlotDim().eval(BoundSymbols()), 0);
}

TEST(BoundSymbols, ClearUnbindsAndNamesStillWork) {
  auto table = std::make_shared<SymbolTable>();
  table->slot("a");
  table->slot("b");
  BoundSymbols v(table);
  EXPECT_TRUE(v.to_map().empty());
  v.set(1, 9);
  EXPECT_EQ(v.find("b"), 9);
  EXPECT_EQ(v.find("a"), std::nullopt);
  EXPECT_EQ(v.find("z"), std::nullopt);
  EXPECT_EQ(v.to_map(), (SymbolValues{{"b", 9}}));
  v.clear();
  EXPECT_FALSE(v.has(1));
  EXPECT_TRUE(v.to_map().empty());
}

TEST(BoundSymbols, AMapByNameConverts) {
  const BoundSymbols v = SymbolValues{{"x", 2}, {"y", 0}};
  EXPECT_EQ(v.find("x"), 2);
  EXPECT_EQ(v.find("y"), 0);
  EXPECT_EQ(v.to_map(), (SymbolValues{{"x", 2}, {"y", 0}}));
  EXPECT_EQ(v.at(*v.table().find("y")), 0);
}

}  // namespace
}  // namespace disco
