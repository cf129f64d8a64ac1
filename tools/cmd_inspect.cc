// disco inspect: values with their symbolic shapes, and the constraint store.
#include <cstdio>

#include "frontend/onnx_importer.h"
#include "lowering/infer_context.h"
#include "schedules/fusion.h"
#include "targets/partitioner.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace disco {

namespace {

const char *kInspectHelp =
    "usage: disco inspect MODEL.onnx [--fusion] [--targets B1,B2,...]\n"
    "\n"
    "Prints the model's inputs and outputs, every value with its dtype and symbolic\n"
    "shape (folded shape values too), and the shape constraints that were collected.\n"
    "\n"
    "  --fusion             also print the fusion groups (kernels) and their member nodes\n"
    "  --targets B1,B2,...  partition for these backends in priority order (host is implied\n"
    "                       last) and print the regions: backend, nodes, inputs and outputs\n"
    "                       with their symbolic shapes, and why a backend declined a node\n";

void print_value(const Graph &g, int id, const char *prefix) {
  const Value &v = g.value(id);
  std::printf("%s%s: %s %s", prefix, v.name.c_str(), dtype_name(v.dtype), v.shape ? shape_str(*v.shape).c_str() : "?");
  if (v.sym_value && !v.constant) std::printf("  value %s", shape_str(*v.sym_value).c_str());
  std::printf("\n");
}

}  // namespace

int cmd_inspect(int argc, char **argv) {
  CliArgs args(argc, argv, 2, {"help", "fusion"}, {"targets"});
  if (args.flag("help")) {
    std::fputs(kInspectHelp, stdout);
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("expected exactly one MODEL");
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
  std::printf("constraints:\n");
  for (const auto &line : store.describe()) std::printf("  %s\n", line.c_str());
  if (args.flag("fusion")) {
    auto groups = plan_fusion(g, store);
    int ops = 0;
    for (const auto &n : g.nodes) ops += node_is_folded(g, n) ? 0 : 1;
    std::printf("fusion: %zu kernels (one per op: %d)\n", groups.size(), ops);
    for (size_t i = 0; i < groups.size(); ++i) {
      std::printf("  k%zu %s:", i, group_kind_name(groups[i].kind));
      for (int n : groups[i].nodes) std::printf(" %s", g.nodes[n].name.c_str());
      std::printf("\n");
    }
  }
  if (!args.all("targets").empty()) {
    auto backends = make_backends(parse_backend_list(args.get("targets", "host")));
    std::vector<const Backend *> order;
    for (const auto &b : backends) order.push_back(b.get());
    std::fputs(describe_partition(g, partition_graph(g, store, order)).c_str(), stdout);
  }
  return 0;
}

}  // namespace disco
