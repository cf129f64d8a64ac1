// A graph after shape inference and partitioning for a list of registered
// backends, with the lookups that backend tests ask of it.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/backend_registry.h"
#include "lowering/infer_context.h"
#include "targets/partitioner.h"

namespace disco::testing {

struct Partitioned {
  Graph graph;
  ShapeStore store;
  Partition partition;

  // The backend of the region holding the nth node of `op_type`.
  std::string backend_of(const std::string &op_type, int nth = 0) const {
    for (size_t n = 0; n < graph.nodes.size(); ++n)
      if (graph.nodes[n].op_type == op_type && nth-- == 0) return partition.regions.at(partition.region_of[n]).backend;
    ADD_FAILURE() << "no " << op_type << " node";
    return "";
  }
  bool has_note(const std::string &text) const {
    for (const auto &n : partition.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  }
  std::string notes() const {
    std::string s;
    for (const auto &n : partition.notes) s += n + "\n";
    return s;
  }
};

// A graph that breaks one limit of a backend: the node of `op` must go to the
// next backend, and the partition's notes carry `reason`.
struct DeclineCase {
  const char *what;
  Graph graph;
  const char *op, *reason;
};

inline Partitioned partition_for(Graph g, const std::vector<std::string> &backend_names,
                                 const PartitionOptions &opts = {}) {
  Partitioned p;
  p.graph = std::move(g);
  infer_shapes(p.graph, p.store);
  auto backends = make_backends(backend_names);
  std::vector<const Backend *> order;
  for (const auto &b : backends) order.push_back(b.get());
  p.partition = partition_graph(p.graph, p.store, order, opts);
  return p;
}

}  // namespace disco::testing
