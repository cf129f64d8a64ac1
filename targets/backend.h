// The BYOC interface: everything a backend writes to plug into disco.
//
// A backend declares what it takes as SupportRules: per op, or per pattern
// anchored at an op (a MatMul with its bias and activation). Each rule has a
// check that sees dtypes, attributes and the shape store's facts, and returns
// the nodes it takes as one unit, or declines with a reason. The partitioner
// (targets/partitioner.h) turns accepted units into regions; the backend then
// compiles each of its regions into plan steps through a PlanBuilder, and its
// runtime glue (runtime/extern_kernel.h) runs those steps.
//
// Frontend, shape inference, partitioning, host fallback, memory and the
// runtime are shared; a backend writes only its rules, its codegen and its glue.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

class PlanBuilder;
struct Region;

// Read-only view of the graph for support checks.
class MatchContext {
 public:
  MatchContext(const Graph &g, const ShapeStore &store);
  const Graph &graph() const { return g_; }
  const ShapeStore &store() const { return store_; }
  const Node &node(int n) const { return g_.nodes[n]; }
  const Value &value(int vid) const { return g_.value(vid); }
  // Nodes that read the value as data (not folded shape computations).
  const std::vector<int> &consumers(int vid) const;
  bool is_graph_output(int vid) const;
  bool is_constant(int vid) const { return vid >= 0 && g_.value(vid).constant.has_value(); }
  // The value's only consumer, when it has exactly one and is not a graph output; else -1.
  int sole_consumer(int vid) const;
  // A constant scalar (any rank, one element) as a double.
  bool scalar_constant(int vid, double *out) const;
  // True when the value is computed, through any chain of nodes, from an
  // output of `node`: such an operand cannot join the node's unit.
  bool depends_on(int vid, int node) const;

 private:
  const Graph &g_;
  const ShapeStore &store_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> graph_output_;
  std::vector<int> producer_;
};

struct SupportRule {
  std::string name;              // e.g. "matmul+epilogue"
  std::vector<std::string> ops;  // anchor op types (default ONNX domain)
  // Returns the nodes taken as one unit, anchor first, or {} after setting `why`.
  std::function<std::vector<int>(const MatchContext &ctx, int node, std::string *why)> check;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::vector<SupportRule> rules() const = 0;
  // Regions with fewer nodes go back to the next backend: too small to pay for a hand-over.
  virtual int min_region_nodes() const { return 1; }
  // Appends the region's steps to the plan.
  virtual void compile(const Region &region, PlanBuilder &builder) const = 0;
  // Extra lines for `disco inspect --targets` about its regions (e.g. quantization); empty by default.
  virtual std::string describe(const Graph &g, const ShapeStore &store, const std::vector<Region> &regions) const { return ""; }

  // The fallback backend's duties (host, last in every list; others keep the defaults, which refuse):
  // - a step that copies `vid` into its graph output buffer, for outputs no region writes (a graph input, a
  //   constant, an output listed twice);
  // - the code generator's runtime object for a target, and the shared library that links the kernel objects
  //   every region added to the plan with it, which the runtime loads.
  virtual void compile_output_copy(int vid, PlanBuilder &builder) const;
  virtual void write_runtime_object(const std::string &target, const std::string &path) const;
  virtual void link_kernel_library(const std::vector<std::string> &objects, const std::string &path) const;
};

}  // namespace disco
