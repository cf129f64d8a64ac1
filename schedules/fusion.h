// Fusion planning: which nodes share a kernel. Decisions come from op kinds
// and the shape store's queries (same_shape, same_num_elements), never from
// concrete sizes, so one plan serves every input shape.
//
// Groups are grown from consumers back to producers. A producer joins the
// group of its only consumer when it has one output, is not a graph output,
// and the group can compute it without recomputing it many times:
//  - loop:   elementwise ops (and views) whose element counts are provably
//            equal, one loop nest;
//  - input:  a reduction (Reduce*, ArgMax, pools, a softmax over an inner
//            axis) with the elementwise producers of its data input inlined;
//  - stitch: row reductions that keep their shape (Softmax, LogSoftmax,
//            LayerNormalization over trailing axes) with their elementwise
//            producers and consumers of the same shape, and further row
//            reductions over the same rows: computed row by row, each row
//            kept in cache (LayerNormalization -> Mul -> Add -> Softmax ->
//            Relu is one kernel);
//  - dot:    a MatMul/Gemm/Conv with the views it reads and the elementwise
//            epilogue of its output's shape;
//  - host, opaque: one node each; copy: a graph output no kernel writes.
// Each group has one root, the last node; the values it lists as outputs are
// the only ones that leave it.
#pragma once
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

enum class GroupKind { Loop, Input, Stitch, Dot, Host, Opaque, Copy };
const char *group_kind_name(GroupKind k);

struct FusionGroup {
  GroupKind kind = GroupKind::Loop;
  std::vector<int> nodes;    // topological order; the root is last
  std::vector<int> outputs;  // value ids that leave the group
};

// The first of the trailing axes that a Softmax, LogSoftmax or
// LayerNormalization normalizes (a row reduction that keeps its input's
// shape), or -1 for any other node.
int row_reduction_axis(const Graph &g, const Node &n);

// Groups in an order that respects their dependencies. Graph outputs that no
// kernel computes (an input or a constant returned as is) get a Copy group.
std::vector<FusionGroup> plan_fusion(const Graph &g, const ShapeStore &store);

// The same for the nodes of one region (topological order): values that
// other regions read leave their group, and graph outputs get no Copy group
// (the caller adds those once every region is compiled).
std::vector<FusionGroup> plan_region_fusion(const Graph &g, const ShapeStore &store, const std::vector<int> &nodes);

}  // namespace disco
