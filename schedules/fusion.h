// Fusion planning: which nodes share a kernel. Decisions come from op kinds
// and the shape store's queries, never from concrete sizes, so one plan
// serves every input shape.
//
// A producer is fused into its consumer when it is elementwise or a view, has
// exactly one consumer, is not a graph output, and the consumer can absorb it
// without recomputing it many times (elementwise, view or reduction
// consumers; dot consumers absorb views only). Each group then has one root,
// whose outputs are the only values that leave the group.
#pragma once
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

enum class GroupKind { Loop, Reduction, Dot, Host, Opaque, Copy };
const char *group_kind_name(GroupKind k);

struct FusionGroup {
  GroupKind kind = GroupKind::Loop;
  std::vector<int> nodes;    // topological order; the root is last
  std::vector<int> outputs;  // value ids that leave the group
};

// True when every output of the node is known at compile time (constants and
// shape values), so the node needs no kernel.
bool node_is_folded(const Graph &g, const Node &n);

// Groups in an order that respects their dependencies. Graph outputs that no
// kernel computes (an input or a constant returned as is) get a Copy group.
std::vector<FusionGroup> plan_fusion(const Graph &g, const ShapeStore &store);

// The same for the nodes of one region (topological order): values that
// other regions read leave their group, and graph outputs get no Copy group
// (the caller adds those once every region is compiled).
std::vector<FusionGroup> plan_region_fusion(const Graph &g, const ShapeStore &store, const std::vector<int> &nodes);

}  // namespace disco
