// The BYOC interface: everything a backend writes to plug into disco.
//
// A backend declares what it takes as SupportRules, one per anchor op (a
// MatMul, with the bias and activation after it as a pattern). Each rule has a
// check that sees dtypes, attributes and the shape store's facts, and returns
// a Match: the nodes it takes as one unit with what it matched (its payload),
// or a reason it declines. The partitioner (targets/partitioner.h) turns
// accepted units into regions, each unit keeping its payload; the backend then
// compiles each of its regions into plan steps through a PlanBuilder, reading
// the payloads instead of matching again, and its runtime glue
// (runtime/extern_kernel.h) runs those steps. A region it cannot compile after
// all goes back to the partitioner (Declined).
//
// Frontend, shape inference, partitioning, host fallback, memory and the
// runtime are shared; a backend writes only its rules, its codegen and its glue.
#pragma once
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

class PlanBuilder;
struct Region;

// Read-only view of the graph for support checks, with the questions every
// backend's rules ask.
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

  // The value's shape (null for vid < 0 or an unknown shape) and rank (-1 then).
  const Shape *shape_of(int vid) const;
  int rank_of(int vid) const;
  bool is_f32(int vid) const { return vid >= 0 && g_.value(vid).dtype == DType::F32; }
  // Names the first value (vid >= 0) that is not float32, or "" when all are.
  std::string dtype_reason(const std::vector<int> &vids) const;
  // True when a value of shape `small` broadcasts into `big` without growing it:
  // each of its dims (aligned right) is 1 or provably big's.
  bool broadcasts_into(const Shape &small, const Shape &big) const;
  static bool is_default_domain(const Node &n) { return n.domain.empty() || n.domain == "ai.onnx"; }
  // True when `node` (>= 0) is an ONNX `op`.
  bool is_op(int node, const char *op) const;
  // True when the node has an output 0 and reads of its other outputs (MaxPool's Indices) are none.
  bool only_first_output_read(const Node &n) const;

 private:
  const Graph &g_;
  const ShapeStore &store_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> graph_output_;
  std::vector<int> producer_;
};

// What a support check matched, for the backend's compile(): a backend derives
// its match record from it, and compile() reads it back from the unit
// (Unit::payload_as<T>()), so the rule and the codegen cannot disagree.
struct MatchPayload {
  virtual ~MatchPayload() = default;
};

// A support check's answer: the nodes it takes as one unit, anchor first, with
// its payload (may be null); or no nodes and the reason it declines.
struct Match {
  std::vector<int> nodes;
  std::shared_ptr<const MatchPayload> payload;
  std::string why;
  bool taken() const { return !nodes.empty(); }
};
inline Match take(std::vector<int> nodes, std::shared_ptr<const MatchPayload> payload = nullptr) {
  return {std::move(nodes), std::move(payload), ""};
}
inline Match decline(std::string why) { return {{}, nullptr, std::move(why)}; }
// Takes a backend's match record that lists its nodes (anchor first), as its own payload.
template <class Record>
Match take_record(Record record) {
  std::vector<int> nodes = record.nodes;
  return take(std::move(nodes), std::make_shared<const Record>(std::move(record)));
}

struct SupportRule {
  std::string name;              // what inspect shows, e.g. "matmul+epilogue"; rules may share one
  std::string op;                // the anchor op type (default ONNX domain); empty: every op (the host)
  // A check that throws disco::Error (a malformed attribute) declines with its message.
  std::function<Match(const MatchContext &ctx, int node)> check;
};

// What compile() hands back to the partitioner: the region's nodes it does not
// take, with the reason; empty when it compiled the whole region. A backend
// that declines adds no steps: the declined nodes go to the next backend that
// accepts them, the rest comes back to it as new regions (compile_partition).
struct Declined {
  std::vector<int> nodes;
  std::string why;
};

// What an AOT library (driver/aot/) needs to run a backend's extern steps:
// the C function that registers its extern kernels (runtime/extern_c_abi.h
// then runs them), the static libraries that hold that glue (their members go
// into NAME.a), and the system libraries a program links beside NAME.a.
// The host backend's steps are the Halide kernels of a CPU target: its glue is
// the OpenMP loop they run their parallel loops on. The GPU backends need nothing. A backend whose steps name files it wrote into the compile folder
// (PlanBuilder::dir(); vitis_ai's NAME.rN.xmodel) lists those params in
// file_params: disco compile installs each named file beside NAME.a.
struct AotGlue {
  std::string install_function;          // extern "C" void NAME(void); empty: none
  std::vector<std::string> archives;     // absolute paths, in link order
  std::vector<std::string> link_flags;   // e.g. -ldnnl -lgomp -lstdc++
  std::vector<std::string> file_params;  // step params whose value is a file name in the compile folder
  // When the glue runs on a thread pool of its own (oneDNN: OpenMP): the C
  // function, with halide_do_par_for's signature, that the library's Halide
  // kernels run their parallel loops on instead, so that one pool serves both
  // (two pools on few cores take the cores from each other), and the one that
  // sets its thread count. Empty: Halide's own pool.
  std::string par_for_function, par_for_threads_function;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::vector<SupportRule> rules() const = 0;
  // Regions with fewer nodes go back to the next backend: too small to pay for a hand-over.
  virtual int min_region_nodes() const { return 1; }
  // Before partitioning: rewrites the graph to hand this backend work that it
  // runs better than the host's kernels would (oneDNN: the input projections
  // of RNN/GRU/LSTM nodes as MatMuls, lowering/recurrent_projection.h). New
  // values have their shapes. Returns the number of nodes rewritten; none by
  // default.
  virtual int prepare_graph(Graph &g) const { return 0; }
  // Before any region is compiled: lays out the constants the region's
  // kernels read the way they read them (a graph rewrite of the region's nodes
  // only; the host packs dot weights). Nothing by default.
  virtual void prepare_region(Graph &g, Region &region, const std::string &target) const {}
  // Appends the region's steps to the plan, or declines nodes of it (and adds none).
  virtual Declined compile(const Region &region, PlanBuilder &builder) const = 0;
  // The glue its steps need in an AOT library; nullopt (the default) when it cannot go into one.
  virtual std::optional<AotGlue> aot_glue() const { return std::nullopt; }
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
