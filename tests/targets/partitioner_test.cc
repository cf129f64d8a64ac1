// The partitioner: regions follow backend priority, never form cycles, drop
// below a backend's minimum size, and carry every symbol they use.
#include "driver/backend_registry.h"
#include "targets/partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"

namespace disco {
namespace {

// What FakeBackend's rules hand compile(): the op they matched.
struct FakeMatch : MatchPayload {
  std::string op;
};

// A backend that takes the listed ops one node at a time, one rule per op.
class FakeBackend : public Backend {
 public:
  FakeBackend(std::vector<std::string> ops, int min_nodes = 1, std::string name = "fake")
      : ops_(std::move(ops)), min_(min_nodes), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::vector<SupportRule> rules() const override {
    std::vector<SupportRule> rules;
    for (const auto &op : ops_)
      rules.push_back({"op", op, [](const MatchContext &ctx, int node) {
                         auto m = std::make_shared<FakeMatch>();
                         m->op = ctx.node(node).op_type;
                         return take({node}, m);
                       }});
    return rules;
  }
  int min_region_nodes() const override { return min_; }
  Declined compile(const Region &, PlanBuilder &) const override { return {}; }

 private:
  std::vector<std::string> ops_;
  int min_;
  std::string name_;
};

struct Partitioned {
  Graph g;
  ShapeStore store;
  Partition p;
  int node(const std::string &op, int nth = 0) const {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].op_type == op && nth-- == 0) return static_cast<int>(i);
    ADD_FAILURE() << "no " << op;
    return -1;
  }
  const Region &region_of(const std::string &op, int nth = 0) const {
    return p.regions.at(p.region_of.at(node(op, nth)));
  }
};

Partitioned partition(Graph g, const Backend &fake, const PartitionOptions &opts = {}) {
  Partitioned r{std::move(g), {}, {}};
  infer_shapes(r.g, r.store);
  auto host = make_backend("host");
  r.p = partition_graph(r.g, r.store, {&fake, host.get()}, opts);
  return r;
}

Shape bsd() { return {Dim::symbol("batch"), Dim::symbol("seq"), Dim(8)}; }

// Every data edge goes from an earlier region to a later one (or stays inside).
void expect_regions_ordered(const Partitioned &r) {
  for (size_t i = 0; i < r.g.nodes.size(); ++i)
    for (int in : r.g.nodes[i].inputs)
      for (size_t j = 0; j < r.g.nodes.size(); ++j) {
        const auto &outs = r.g.nodes[j].outputs;
        if (in < 0 || std::find(outs.begin(), outs.end(), in) == outs.end()) continue;
        if (r.p.region_of[i] < 0 || r.p.region_of[j] < 0) continue;
        EXPECT_LE(r.p.region_of[j], r.p.region_of[i]) << r.g.nodes[j].name << " -> " << r.g.nodes[i].name;
      }
}

TEST(Partitioner, SplitsADiamondThatANaiveMergeWouldMakeCyclic) {
  // x -> Relu(fake) -> Sigmoid(host) -> Add(fake); Relu -> Add.
  // Merging Add into Relu's region would make fake -> host -> fake.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bsd());
  auto a = b.op("Relu", {x});
  auto h = b.op("Sigmoid", {a});
  b.output(b.op("Add", {a, h}));
  FakeBackend fake({"Relu", "Add"});
  auto r = partition(b.build(), fake);
  ASSERT_EQ(r.p.regions.size(), 3u);
  EXPECT_EQ(r.region_of("Relu").backend, "fake");
  EXPECT_EQ(r.region_of("Sigmoid").backend, "host");
  EXPECT_EQ(r.region_of("Add").backend, "fake");
  EXPECT_NE(r.region_of("Relu").id, r.region_of("Add").id);
  expect_regions_ordered(r);
}

TEST(Partitioner, MergesNeighboursOfOneBackendWhenNoCycleArises) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bsd());
  auto a = b.op("Relu", {x});
  auto c = b.op("Add", {a, a});
  b.output(b.op("Sigmoid", {c}));
  FakeBackend fake({"Relu", "Add"});
  auto r = partition(b.build(), fake);
  ASSERT_EQ(r.p.regions.size(), 2u);
  EXPECT_EQ(r.region_of("Relu").id, r.region_of("Add").id);
  EXPECT_EQ(r.region_of("Relu").nodes.size(), 2u);
}

TEST(Partitioner, UnsupportedOpsFallBackToHost) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bsd());
  b.output(b.op("Tanh", {b.op("Relu", {x})}));
  FakeBackend fake({"Relu"});
  auto r = partition(b.build(), fake);
  EXPECT_EQ(r.region_of("Relu").backend, "fake");
  EXPECT_EQ(r.region_of("Tanh").backend, "host");
  EXPECT_EQ(r.p.accepted_by[r.node("Tanh")], std::vector<std::string>{"host"});
  EXPECT_EQ(r.p.accepted_by[r.node("Relu")], (std::vector<std::string>{"fake", "host"}));
}

TEST(Partitioner, DropsRegionsBelowTheBackendsMinimum) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bsd());
  auto a = b.op("Relu", {x});                 // a lone fake node: dropped
  auto h = b.op("Sigmoid", {a});              // host
  auto c = b.op("Relu", {h});                 // two fake nodes in a row: kept
  b.output(b.op("Add", {c, c}));
  FakeBackend fake({"Relu", "Add"}, /*min_nodes=*/2);
  auto r = partition(b.build(), fake);
  EXPECT_EQ(r.region_of("Relu", 0).backend, "host");
  EXPECT_EQ(r.region_of("Relu", 1).backend, "fake");
  EXPECT_EQ(r.region_of("Add").backend, "fake");
  bool noted = false;
  for (const auto &n : r.p.notes) noted = noted || n.find("under its minimum of 2") != std::string::npos;
  EXPECT_TRUE(noted) << describe_partition(r.g, r.p);

  // The option overrides the backend's own minimum.
  GraphBuilder b2;
  auto y = b2.input("y", DType::F32, bsd());
  b2.output(b2.op("Sigmoid", {b2.op("Relu", {y})}));
  PartitionOptions opts;
  opts.min_region_nodes["fake"] = 1;
  auto r2 = partition(b2.build(), fake, opts);
  EXPECT_EQ(r2.region_of("Relu").backend, "fake");
}

TEST(Partitioner, PassesEverySymbolARegionUsesIn) {
  // The fake region's output has a dim (batch*seq) that none of its inputs
  // spell the same way, and a Reshape target built from shape values.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bsd());
  auto shape = b.op("Shape", {x});
  auto flat = b.op("Reshape", {x, b.constant("to", TensorData::from_int64({-1, 8}, {2}))});
  auto relu = b.op("Relu", {flat});
  auto back = b.op("Reshape", {relu, shape});
  b.output(b.op("Sigmoid", {back}));
  FakeBackend fake({"Relu", "Reshape"});
  auto r = partition(b.build(), fake);
  const Region &reg = r.region_of("Relu");
  EXPECT_EQ(reg.backend, "fake");
  EXPECT_EQ(reg.symbols, (std::vector<std::string>{"batch", "seq"}));
  ASSERT_EQ(reg.inputs.size(), 1u);
  EXPECT_EQ(r.g.value(reg.inputs[0]).name, "x");
  EXPECT_EQ(r.p.region_of[r.node("Shape")], -1) << "shape arithmetic folds and belongs to no region";
  const std::string text = describe_partition(r.g, r.p);
  EXPECT_NE(text.find("[fake]"), std::string::npos) << text;
  EXPECT_NE(text.find("symbols: batch seq"), std::string::npos) << text;
  EXPECT_NE(text.find("in  x: float32 [batch, seq, 8]"), std::string::npos) << text;
}

TEST(Partitioner, UnitsCarryWhatTheirRuleMatched) {
  GraphBuilder b;
  b.output(b.op("Sigmoid", {b.op("Relu", {b.input("x", DType::F32, bsd())})}));
  auto r = partition(b.build(), FakeBackend({"Relu"}));
  ASSERT_EQ(r.region_of("Relu").units.size(), 1u);
  EXPECT_EQ(r.region_of("Relu").units[0].payload_as<FakeMatch>().op, "Relu");
  // The host's units carry no record of the fake backend's kind.
  EXPECT_THROW(r.region_of("Sigmoid").units.at(0).payload_as<FakeMatch>(), Error);
}

TEST(Partitioner, ACheckThatThrowsDeclinesWithItsMessage) {
  class Throwing : public FakeBackend {
   public:
    Throwing() : FakeBackend({}) {}
    std::vector<SupportRule> rules() const override {
      return {{"op", "Relu", [](const MatchContext &, int) -> Match { fail("bad attribute 'alpha'"); }}};
    }
  } throwing;
  GraphBuilder b;
  b.output(b.op("Relu", {b.input("x", DType::F32, bsd())}));
  auto r = partition(b.build(), throwing);
  EXPECT_EQ(r.region_of("Relu").backend, "host");
  bool noted = false;
  for (const auto &n : r.p.notes)
    noted = noted || (n.find("fake declines Relu_0") == 0 && n.find("bad attribute 'alpha'") != std::string::npos);
  EXPECT_TRUE(noted) << describe_partition(r.g, r.p);
}

// x -> Exp -> Relu -> Tanh -> Add(Tanh, Relu) -> Sigmoid: fake takes Relu,
// Tanh and Add as one region, between two of the host's.
Partitioned diamond(const Backend &first, const Backend &second) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, bsd());
  auto a = b.op("Relu", {b.op("Exp", {x})});
  auto t = b.op("Tanh", {a});
  b.output(b.op("Sigmoid", {b.op("Add", {t, a})}));
  Partitioned r{b.build(), {}, {}};
  infer_shapes(r.g, r.store);
  auto host = make_backend("host");
  r.p = partition_graph(r.g, r.store, {&first, &second, host.get()});
  return r;
}

TEST(Partitioner, DeclinedNodesGoToTheNextBackendThatTakesThemAndTheRestStays) {
  FakeBackend fake({"Relu", "Tanh", "Add"}), other({"Tanh"}, 1, "other");
  auto r = diamond(fake, other);
  auto host = make_backend("host");
  const std::vector<const Backend *> order{&fake, &other, host.get()};
  ASSERT_EQ(r.p.regions.size(), 3u);
  ASSERT_EQ(r.region_of("Relu").nodes.size(), 3u);
  const size_t at = static_cast<size_t>(r.p.region_of[r.node("Relu")]);
  reassign_declined(r.g, r.store, order, {}, at, {{r.node("Tanh")}, "no room for Tanh"}, r.p);
  // Tanh goes to `other` (the next backend that takes it), Relu and Add stay
  // with fake, in two regions now, since one would be a cycle through Tanh.
  EXPECT_EQ(r.region_of("Tanh").backend, "other");
  EXPECT_EQ(r.region_of("Relu").backend, "fake");
  EXPECT_EQ(r.region_of("Add").backend, "fake");
  EXPECT_NE(r.region_of("Relu").id, r.region_of("Add").id);
  EXPECT_EQ(r.region_of("Sigmoid").backend, "host");
  ASSERT_EQ(r.p.regions.size(), 5u);
  for (size_t i = 0; i < r.p.regions.size(); ++i) EXPECT_EQ(r.p.regions[i].id, static_cast<int>(i));
  expect_regions_ordered(r);
  bool noted = false;
  for (const auto &n : r.p.notes) noted = noted || n == "fake hands back {Tanh_2} of region 1: no room for Tanh";
  EXPECT_TRUE(noted) << describe_partition(r.g, r.p);
}

TEST(Partitioner, AWholeRegionDeclinedGoesPastItsBackendButNotToAnEarlierOne) {
  FakeBackend first({"Tanh"}, /*min_nodes=*/2, "first"), fake({"Relu", "Tanh", "Add"});
  auto r = diamond(first, fake);
  auto host = make_backend("host");
  const std::vector<const Backend *> order{&first, &fake, host.get()};
  ASSERT_EQ(r.region_of("Tanh").backend, "fake") << "first's lone Tanh is under its minimum";
  const Region region = r.region_of("Relu");
  reassign_declined(r.g, r.store, order, {}, static_cast<size_t>(region.id), {region.nodes, "cannot"}, r.p);
  for (const char *op : {"Exp", "Relu", "Tanh", "Add", "Sigmoid"}) EXPECT_EQ(r.region_of(op).backend, "host") << op;
  EXPECT_EQ(r.region_of("Relu").id, r.region_of("Add").id);
  expect_regions_ordered(r);
}

TEST(Partitioner, BackendListsAreCheckedByName) {
  EXPECT_THROW(make_backends({"nosuch"}), Error);
  EXPECT_THROW(make_backends({"host", "host"}), Error);
  auto list = make_backends({});
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]->name(), "host") << "host is always the last backend";
}

}  // namespace
}  // namespace disco
