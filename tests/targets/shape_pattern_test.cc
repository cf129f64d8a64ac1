// A fusion group's shape pattern (targets/host/shape_pattern.h): its distinct
// symbolic extents become p0, p1, ... in order of first appearance, with the
// facts the model's store proves of them, and the scratch graph is put back.
#include "targets/host/shape_pattern.h"

#include <gtest/gtest.h>

namespace disco {
namespace {

const Dim n = Dim::symbol("n"), h = Dim::symbol("h"), s = Dim::symbol("s");

int value(Graph &g, const std::string &name, Shape shape) {
  const int id = g.add_value(name, DType::F32);
  g.value(id).shape = std::move(shape);
  return id;
}

struct Fixture {
  Graph g;
  ShapeStore store;
  FusionGroup group{GroupKind::Loop, {0}, {}};
  Fixture() {
    for (const char *sym : {"n", "h", "s"}) store.declare_symbol(sym, "input");
    store.declare_symbol("t", "node 'reshape'");
    store.assert_equal(Dim::symbol("t"), s, "test");  // t is s
    store.facts("n").likely = {4};
    store.facts("h").likely = {6};
    const int a = value(g, "a", {n, 16, floor_div(h + 1, 2)});
    const int b = value(g, "b", {n, 16, 1});
    const int c = value(g, "c", {16 * Dim::symbol("t"), h + 2, floor_div(h + 1, 2)});
    g.nodes.push_back({"add", "Add", "", 17, {a, b}, {c}, {}});
    group.outputs = {c};
  }
};

TEST(ShapePattern, ExtentsBecomeParametersInOrderOfFirstAppearance) {
  Fixture f;
  Graph scratch = f.g;
  {
    ShapePattern p(scratch, f.g, f.store, f.group);
    ASSERT_TRUE(p.applies());
    EXPECT_EQ(p.params(), (std::vector<std::string>{"p0", "p1", "p2", "p3"}));
    const Dim p0 = Dim::symbol("p0"), p1 = Dim::symbol("p1"), p2 = Dim::symbol("p2"), p3 = Dim::symbol("p3");
    EXPECT_EQ(*p.graph().value(0).shape, (Shape{p0, 16, p1}));
    EXPECT_EQ(*p.graph().value(1).shape, (Shape{p0, 16, 1})) << "constants stay constants";
    EXPECT_EQ(*p.graph().value(2).shape, (Shape{p2, p3, p1})) << "the same extent is the same parameter";
    EXPECT_EQ(p.extent("p1").str(), floor_div(h + 1, 2).str());
    EXPECT_EQ(p.extent("p2").str(), (16 * s).str()) << "canonical: t is s";
    EXPECT_EQ(p.extent("p3").str(), (h + 2).str());

    const SymbolFacts &f2 = p.store().facts("p2");
    EXPECT_EQ(f2.divisor, 16);
    EXPECT_TRUE(f2.not_one);
    EXPECT_EQ(p.store().facts("p3").min, 2);
    EXPECT_FALSE(p.store().can_be_one(Dim::symbol("p3")));
    EXPECT_TRUE(p.store().can_be_one(p0));
    EXPECT_EQ(p.store().facts("p0").likely, (std::vector<int64_t>{4}));
    EXPECT_EQ(p.store().facts("p1").likely, (std::vector<int64_t>{3})) << "(6 + 1) / 2";
    EXPECT_TRUE(p.store().facts("p2").likely.empty()) << "s has no likely value";
  }
  EXPECT_EQ(*scratch.value(0).shape, *f.g.value(0).shape) << "the scratch graph is put back";
  EXPECT_EQ(*scratch.value(2).shape, *f.g.value(2).shape);
}

TEST(ShapePattern, ShapeValuesShareTheExtentsParameters) {
  Fixture f;
  const int dims = f.g.add_value("dims", DType::I64);
  f.g.value(dims).shape = Shape{2};
  f.g.value(dims).sym_value = std::vector<Dim>{floor_div(h + 1, 2), 5};
  f.g.nodes[0].inputs.push_back(dims);
  Graph scratch = f.g;
  ShapePattern p(scratch, f.g, f.store, f.group);
  ASSERT_TRUE(p.applies());
  EXPECT_EQ(*p.graph().value(dims).sym_value, (std::vector<Dim>{Dim::symbol("p1"), 5}));
}

TEST(ShapePattern, AGroupWithASubgraphOrAnUnboundedExtentKeepsTheModelsSymbols) {
  Fixture f;
  Graph scratch = f.g;
  f.g.nodes[0].attrs["body"].kind = Attribute::GraphAttr;
  EXPECT_FALSE(ShapePattern(scratch, f.g, f.store, f.group).applies());

  Fixture u;
  u.g.value(2).shape->at(0) = n * (h - 5);  // a product of a factor that may be negative: no lower bound
  Graph scratch2 = u.g;
  {
    ShapePattern p(scratch2, u.g, u.store, u.group);
    EXPECT_FALSE(p.applies());
  }
  EXPECT_EQ(*scratch2.value(0).shape, *u.g.value(0).shape) << "nothing was rewritten";
}

}  // namespace
}  // namespace disco
