#include "schedules/fusion.h"

#include <algorithm>
#include <map>
#include <set>

#include "lowering/op_registry.h"

namespace disco {

const char *group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::Loop: return "loop";
    case GroupKind::Reduction: return "reduction";
    case GroupKind::Dot: return "dot";
    case GroupKind::Host: return "host";
    case GroupKind::Opaque: return "opaque";
    case GroupKind::Copy: return "copy";
  }
  return "?";
}

bool node_is_folded(const Graph &g, const Node &n) {
  for (int o : n.outputs)
    if (o >= 0 && !g.value(o).constant && !g.value(o).sym_value) return false;
  return true;
}

namespace {

OpKind kind_of(const Node &n) {
  const OpDef *d = OpRegistry::global().find(n.domain, n.op_type, n.opset);
  return d ? d->kind : OpKind::Opaque;
}

GroupKind group_kind(OpKind k) {
  switch (k) {
    case OpKind::Elementwise:
    case OpKind::View: return GroupKind::Loop;
    case OpKind::Reduction: return GroupKind::Reduction;
    case OpKind::Dot: return GroupKind::Dot;
    case OpKind::Host: return GroupKind::Host;
    default: return GroupKind::Opaque;
  }
}

bool can_absorb(OpKind producer, OpKind consumer) {
  bool cheap = producer == OpKind::Elementwise || producer == OpKind::View;
  if (!cheap || consumer == OpKind::Host) return false;
  if (consumer == OpKind::Elementwise || consumer == OpKind::View || consumer == OpKind::Reduction) return true;
  return consumer == OpKind::Dot && producer == OpKind::View;
}

}  // namespace

namespace {

std::vector<FusionGroup> plan_groups(const Graph &g, const ShapeStore &store, const std::vector<bool> &in_scope,
                                     bool copy_outputs) {
  const int n = static_cast<int>(g.nodes.size());
  std::set<int> graph_outputs(g.outputs.begin(), g.outputs.end());
  // Kernel consumers of each value; folded nodes (Shape of x) read no data.
  std::map<int, std::vector<int>> consumers;
  for (int i = 0; i < n; ++i) {
    if (node_is_folded(g, g.nodes[i])) continue;
    for (int in : g.nodes[i].inputs)
      if (in >= 0 && !g.value(in).constant && !g.value(in).sym_value) consumers[in].push_back(i);
  }
  std::vector<int> group_of(n, -1);
  std::vector<FusionGroup> groups;
  for (int i = n - 1; i >= 0; --i) {
    const Node &node = g.nodes[i];
    if (!in_scope[i] || node_is_folded(g, node)) continue;
    int target = -1;
    if (node.outputs.size() == 1 && node.outputs[0] >= 0 && !graph_outputs.count(node.outputs[0])) {
      auto &cs = consumers[node.outputs[0]];
      std::set<int> distinct(cs.begin(), cs.end());
      if (distinct.size() == 1 && in_scope[*distinct.begin()] &&
          can_absorb(kind_of(node), kind_of(g.nodes[*distinct.begin()])))
        target = group_of[*distinct.begin()];
    }
    if (target < 0) {
      target = static_cast<int>(groups.size());
      groups.push_back({group_kind(kind_of(node)), {}, {}});
    }
    group_of[i] = target;
    groups[target].nodes.push_back(i);
  }
  for (auto &gr : groups) std::reverse(gr.nodes.begin(), gr.nodes.end());
  // Kernels run in the order of their roots.
  std::sort(groups.begin(), groups.end(),
            [](const FusionGroup &a, const FusionGroup &b) { return a.nodes.back() < b.nodes.back(); });
  for (auto &gr : groups) {
    std::set<int> mine(gr.nodes.begin(), gr.nodes.end());
    for (int node : gr.nodes)
      for (int o : g.nodes[node].outputs) {
        if (o < 0) continue;
        bool leaves = graph_outputs.count(o) != 0;
        for (int c : consumers[o]) leaves = leaves || !mine.count(c);
        if (leaves) gr.outputs.push_back(o);
      }
  }
  // Host ops read buffers: constant or folded inputs get written by a Copy group first.
  std::vector<FusionGroup> with_copies;
  for (auto &gr : groups) {
    if (gr.kind == GroupKind::Host)
      for (int in : g.nodes[gr.nodes[0]].inputs)
        if (in >= 0 && (g.value(in).constant || g.value(in).sym_value)) with_copies.push_back({GroupKind::Copy, {}, {in}});
    with_copies.push_back(std::move(gr));
  }
  groups = std::move(with_copies);
  if (!copy_outputs) return groups;
  // Graph outputs no kernel writes: inputs, constants, folded values, repeats.
  std::set<int> written;
  for (const auto &gr : groups) written.insert(gr.outputs.begin(), gr.outputs.end());
  std::set<int> seen;
  for (int o : g.outputs) {
    if (!written.count(o) || seen.count(o)) groups.push_back({GroupKind::Copy, {}, {o}});
    seen.insert(o);
  }
  (void)store;
  return groups;
}

}  // namespace

std::vector<FusionGroup> plan_fusion(const Graph &g, const ShapeStore &store) {
  return plan_groups(g, store, std::vector<bool>(g.nodes.size(), true), true);
}

std::vector<FusionGroup> plan_region_fusion(const Graph &g, const ShapeStore &store, const std::vector<int> &nodes) {
  std::vector<bool> in_scope(g.nodes.size(), false);
  for (int x : nodes) in_scope.at(x) = true;
  return plan_groups(g, store, in_scope, false);
}

}  // namespace disco
