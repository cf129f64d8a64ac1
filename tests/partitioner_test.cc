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

// A backend that takes the listed ops one node at a time.
class FakeBackend : public Backend {
 public:
  FakeBackend(std::vector<std::string> ops, int min_nodes = 1) : ops_(std::move(ops)), min_(min_nodes) {}
  std::string name() const override { return "fake"; }
  std::vector<SupportRule> rules() const override {
    return {{"op", ops_, [](const MatchContext &, int node, std::string *) { return std::vector<int>{node}; }}};
  }
  int min_region_nodes() const override { return min_; }
  void compile(const Region &, PlanBuilder &) const override {}

 private:
  std::vector<std::string> ops_;
  int min_;
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

TEST(Partitioner, BackendListsAreCheckedByName) {
  EXPECT_THROW(make_backends({"nosuch"}), Error);
  EXPECT_THROW(make_backends({"host", "host"}), Error);
  auto list = make_backends({});
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]->name(), "host") << "host is always the last backend";
}

}  // namespace
}  // namespace disco
