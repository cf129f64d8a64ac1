// disco inspect: values with their symbolic shapes, and the constraint store.
#include <cstdio>

#include "driver/backend_registry.h"
#include "frontend/checked_size.h"
#include "frontend/errors.h"
#include "frontend/onnx_importer.h"
#include "lowering/graph_rewrites.h"
#include "lowering/infer_context.h"
#include "schedules/fusion.h"
#include "targets/partitioner.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace disco {

namespace {

const char *kInspectHelp =
    "usage: disco inspect MODEL.onnx [--fusion] [--targets B1,B2,...] [--max-memory SIZE]\n"
    "\n"
    "Prints the model's inputs and outputs, every value with its dtype and symbolic\n"
    "shape (folded shape values too), and the shape constraints that were collected.\n"
    "Values whose shape is known and above the memory limit or a kernel's buffer (2^31-1 elements),\n"
    "which a run refuses, are listed.\n"
    "\n"
    "  --max-memory SIZE    the memory limit a run would have, e.g. 8G (default: $DISCO_MAX_MEMORY,\n"
    "                       else the physical memory)\n"
    "  --fusion             also print the kernels: each fusion group with its kind (loop, input,\n"
    "                       stitch, dot, ...) and member nodes, and the kernel count with and\n"
    "                       without fusion; with --targets, as partitioned for those backends\n"
    "  --targets B1,B2,...  partition for these backends in priority order (host is implied\n"
    "                       last) and print the regions: backend, nodes, inputs and outputs\n"
    "                       with their symbolic shapes, and why a backend declined a node\n";

void print_value(const Graph &g, int id, const char *prefix) {
  const Value &v = g.value(id);
  std::printf("%s%s: %s %s", prefix, v.name.c_str(), dtype_name(v.dtype), v.shape ? shape_str(*v.shape).c_str() : "?");
  if (v.sym_value && !v.constant) std::printf("  value %s", shape_str(*v.sym_value).c_str());
  std::printf("\n");
}

// The kernels: fusion groups of the host's nodes (every node without a
// partition), one kernel per unit that a library backend takes. `part`: the
// partition for `targets` (null without --targets). `ops`: the model's op
// count before graph rewrites, the "one per op" baseline.
void print_fusion(const Graph &g, const ShapeStore &store, const Partition *part, const std::string &targets, int ops) {
  struct Kernel {
    std::string kind;
    std::vector<int> nodes;
  };
  std::vector<Kernel> kernels;
  auto add_groups = [&](const std::vector<FusionGroup> &groups) {
    for (const auto &gr : groups) kernels.push_back({std::string("host ") + group_kind_name(gr.kind), gr.nodes});
  };
  if (!part) {
    add_groups(plan_fusion(g, store));
  } else {
    for (const Region &r : part->regions) {
      if (r.backend == "host") {
        add_groups(plan_region_fusion(g, store, r.nodes));
        continue;
      }
      for (const Unit &u : r.units) kernels.push_back({r.backend + " " + u.rule, u.nodes});
    }
  }
  std::printf("fusion%s: %zu kernels (one per op: %d)\n", part ? (" for " + targets).c_str() : "", kernels.size(), ops);
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::printf("  k%zu %s:", i, kernels[i].kind.c_str());
    for (int n : kernels[i].nodes) std::printf(" %s", g.nodes[n].name.c_str());
    if (kernels[i].nodes.empty()) std::printf(" (a copy of a graph output)");
    std::printf("\n");
  }
}

}  // namespace

int cmd_inspect(int argc, char **argv) {
  CliArgs args(argc, argv, 2, {"help", "fusion"}, {"targets", "max-memory"});
  if (args.flag("help")) {
    std::fputs(kInspectHelp, stdout);
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("expected exactly one MODEL");
  const MemoryLimit limit = memory_limit(args.get_byte_size("max-memory", 0));
  Graph g = load_onnx_file(args.positional()[0]);
  ShapeStore store;
  infer_shapes(g, store);
  std::printf("model %s: %zu nodes, opset %d\n", args.positional()[0].c_str(), g.nodes.size(),
              g.opsets.count("") ? g.opsets.at("") : 0);
  std::printf("inputs:\n");
  for (int id : g.inputs) print_value(g, id, "  ");
  std::printf("outputs:\n");
  for (int id : g.outputs) print_value(g, id, "  ");
  std::printf("values:\n");
  for (const auto &n : g.nodes) {
    for (int o : n.outputs) {
      if (o < 0) continue;
      std::printf("  %-28s ", (n.op_type + " " + n.name).c_str());
      print_value(g, o, "");
    }
  }
  // What a run would refuse: inspect allocates no values, so it reports them instead (compile_graph
  // makes the same check and fails on the first).
  std::vector<std::string> above;
  for (const auto &n : g.nodes)
    for (int o : n.outputs) {
      if (o < 0) continue;
      const Value &v = g.value(o);
      if (!v.shape) continue;
      std::vector<int64_t> shape;
      for (const Dim &d : *v.shape)
        if (Dim c = store.canonical(d); c.is_const()) shape.push_back(c.as_const());
      if (shape.size() != v.shape->size()) continue;
      try {
        limit.check("value '" + v.name + "'", shape, v.dtype);
        check_kernel_buffer_elements("value '" + v.name + "'", shape);
      } catch (const Error &e) {
        above.push_back(e.what());
      }
    }
  if (!above.empty()) {
    std::printf("above a limit (a run refuses these):\n");
    for (const auto &line : above) std::printf("  %s\n", line.c_str());
  }
  std::printf("constraints:\n");
  for (const auto &line : store.describe()) std::printf("  %s\n", line.c_str());
  int ops = 0;
  for (const auto &n : g.nodes) ops += node_is_folded(g, n) ? 0 : 1;
  // Kernels are planned on the rewritten graph, as compiles do.
  if (const int removed = rewrite_graph(g); removed > 0)
    std::printf("rewrites: %d node(s) folded into their neighbours (see lowering/graph_rewrites.h)\n", removed);
  // And after the backends' own rewrites, where targets are named: one set
  // of backends and one partition serve the rewrites, the fusion and the
  // regions' descriptions.
  const bool targeted = !args.all("targets").empty();
  const std::string targets = targeted ? args.get("targets", "host") : "";
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<const Backend *> order;
  Partition part;
  if (targeted) {
    backends = make_backends(parse_backend_list(targets));
    if (const int n = prepare_graph_for(backends, g); n > 0)
      std::printf("backend rewrites: %d node(s) split for the backends (Backend::prepare_graph)\n", n);
    for (const auto &b : backends) order.push_back(b.get());
    part = partition_graph(g, store, order);
  }
  if (args.flag("fusion")) print_fusion(g, store, targeted ? &part : nullptr, targets, ops);
  if (targeted) {
    std::fputs(describe_partition(g, part).c_str(), stdout);
    for (const Backend *b : order) std::fputs(b->describe(g, store, part.regions).c_str(), stdout);
  }
  return 0;
}

}  // namespace disco
