#include "schedules/fusion.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "lowering/op_registry.h"

namespace disco {

const char *group_kind_name(GroupKind k) {
  static constexpr const char *kNames[] = {"loop", "input", "stitch", "dot", "host", "opaque", "copy"};  // in order
  static_assert(std::size(kNames) == static_cast<size_t>(GroupKind::Copy) + 1, "a GroupKind without a name");
  const auto i = static_cast<size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

namespace {

// The most nodes one group takes. Halide's lowering is superlinear in a
// pipeline's stages: torchvision's ssdlite postprocess (a branch per class,
// all Views and Elementwise ops into one Concat) made one kernel of hundreds
// of nodes that took over 20 minutes to compile. Groups this large gain
// nothing more from fusion than their parts do.
constexpr size_t kMaxGroupNodes = 64;

OpKind kind_of(const Node &n) {
  const OpDef *d = OpRegistry::global().find(n.domain, n.op_type, n.opset);
  return d ? d->kind : OpKind::Opaque;
}

const Shape &shape_of(const Graph &g, int vid) { return *g.value(vid).shape; }

// The node's one output, or -1 when it has several (optional outputs left
// out do not count).
int single_output(const Node &n) {
  int out = -1;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] < 0) continue;
    if (i != 0) return -1;
    out = n.outputs[i];
  }
  return out;
}

// Grows groups from consumers back to producers (see fusion.h).
class Planner {
 public:
  Planner(const Graph &g, const ShapeStore &store, const std::vector<bool> &in_scope)
      : g_(g), store_(store), in_scope_(in_scope), group_of_(g.nodes.size(), -1) {}

  std::vector<FusionGroup> run(bool copy_outputs);

 private:
  bool joins(int p, int c) const;
  bool stitches(int p, int c) const;
  bool epilogue_of(int p, int c) const;
  bool group_has(int member, OpKind k) const;
  // Calls visit(node, value it reads) for c and every group member
  // downstream of it, each reached through `value`; false as soon as one
  // visit is.
  template <class Visit>
  bool all_downstream(int c, int value, const Visit &visit) const;
  GroupKind kind_of_group(const std::vector<int> &nodes) const;

  const Graph &g_;
  const ShapeStore &store_;
  const std::vector<bool> &in_scope_;
  std::map<int, std::vector<int>> consumers_;  // kernel consumers of each value
  std::vector<int> group_of_;
  std::vector<std::vector<int>> members_;
};

bool Planner::group_has(int member, OpKind k) const {
  for (int m : members_[group_of_[member]])
    if (kind_of(g_.nodes[m]) == k) return true;
  return false;
}

template <class Visit>
bool Planner::all_downstream(int c, int value, const Visit &visit) const {
  if (!visit(c, value)) return false;
  const int out = single_output(g_.nodes[c]);
  if (out < 0) return true;  // a group's root may have several outputs; members have one
  auto it = consumers_.find(out);
  if (it == consumers_.end()) return true;
  std::set<int> seen;
  for (int n : it->second)
    if (group_of_[n] == group_of_[c] && seen.insert(n).second && !all_downstream(n, out, visit)) return false;
  return true;
}

// Whether producer p (one output, read by c and maybe other nodes of c's
// group) joins c's group.
bool Planner::joins(int p, int c) const {
  const Node &pn = g_.nodes[p], &cn = g_.nodes[c];
  const OpKind kp = kind_of(pn), kc = kind_of(cn);
  if (kc == OpKind::Host || kc == OpKind::ShapeOnly || kc == OpKind::Opaque) return false;
  const int v = pn.outputs[0];
  switch (kp) {
    case OpKind::View:
      return true;  // index arithmetic only; a MatMul reads its transposed operand in place
    case OpKind::Elementwise: {
      // A dot reads each operand element many times: computing it inline would repeat it.
      if (kc == OpKind::Dot || (kc == OpKind::View && group_has(c, OpKind::Dot))) return false;
      if (kc == OpKind::Reduction) {
        // The reduced data only: a broadcast parameter (LayerNorm's Scale) would be recomputed per element.
        for (size_t i = 0; i < cn.inputs.size(); ++i)
          if (cn.inputs[i] == v && i != 0) return false;
        return true;
      }
      return store_.same_num_elements(shape_of(g_, v), shape_of(g_, cn.outputs[0]));
    }
    case OpKind::Reduction:
      return stitches(p, c);
    case OpKind::Dot:
      return epilogue_of(p, c);
    default:
      return false;
  }
}

// A row reduction p joins c's group when every node from c on to the root
// works on rows of p's output: elementwise ops of its shape and row
// reductions over the same rows reading them as their data. One row of the
// root then needs one row of p.
bool Planner::stitches(int p, int c) const {
  const Node &pn = g_.nodes[p];
  const int axis = row_reduction_axis(g_, pn);
  if (axis < 0) return false;
  const Shape &rows = shape_of(g_, pn.outputs[0]);
  return all_downstream(c, pn.outputs[0], [&](int n, int value) {
    const Node &node = g_.nodes[n];
    if (kind_of(node) == OpKind::Elementwise) return store_.same_shape(shape_of(g_, node.outputs[0]), rows);
    if (row_reduction_axis(g_, node) != axis || node.inputs.empty() || node.inputs[0] != value) return false;
    for (size_t i = 1; i < node.inputs.size(); ++i)
      if (node.inputs[i] == value) return false;
    return store_.same_shape(shape_of(g_, node.inputs[0]), rows);
  });
}

// A dot p takes c's group as its epilogue when that group has no dot or
// reduction and every node from c on has p's output shape.
bool Planner::epilogue_of(int p, int c) const {
  const Shape &out = shape_of(g_, g_.nodes[p].outputs[0]);
  for (int m : members_[group_of_[c]]) {
    const OpKind k = kind_of(g_.nodes[m]);
    if (k != OpKind::Elementwise && k != OpKind::View) return false;
  }
  return all_downstream(c, g_.nodes[p].outputs[0], [&](int n, int) {
    const Node &node = g_.nodes[n];
    return kind_of(node) == OpKind::Elementwise && store_.same_shape(shape_of(g_, node.outputs[0]), out);
  });
}

GroupKind Planner::kind_of_group(const std::vector<int> &nodes) const {
  bool dot = false, row = false, reduction = false;
  for (int n : nodes) {
    const OpKind k = kind_of(g_.nodes[n]);
    if (k == OpKind::Host) return GroupKind::Host;
    dot = dot || k == OpKind::Dot;
    row = row || row_reduction_axis(g_, g_.nodes[n]) >= 0;
    reduction = reduction || k == OpKind::Reduction;
  }
  if (dot) return GroupKind::Dot;
  if (row) return GroupKind::Stitch;
  if (reduction) return GroupKind::Input;
  return kind_of(g_.nodes[nodes.back()]) == OpKind::Opaque ? GroupKind::Opaque : GroupKind::Loop;
}

std::vector<FusionGroup> Planner::run(bool copy_outputs) {
  const int n = static_cast<int>(g_.nodes.size());
  std::set<int> graph_outputs(g_.outputs.begin(), g_.outputs.end());
  // Folded nodes (Shape of x) read no data.
  for (int i = 0; i < n; ++i) {
    if (node_is_folded(g_, g_.nodes[i])) continue;
    for (int in : g_.nodes[i].inputs)
      if (in >= 0 && !g_.value(in).constant && !g_.value(in).sym_value) consumers_[in].push_back(i);
  }
  for (int i = n - 1; i >= 0; --i) {
    const Node &node = g_.nodes[i];
    if (!in_scope_[i] || node_is_folded(g_, node)) continue;
    int target = -1;
    const int out = single_output(node);
    if (out >= 0 && !graph_outputs.count(out) && !consumers_[out].empty()) {
      // Every reader in one group, and that group able to take the node for each of them.
      const std::set<int> readers(consumers_[out].begin(), consumers_[out].end());
      const int c = *readers.begin();
      bool ok = true;
      for (int r : readers) ok = ok && in_scope_[r] && group_of_[r] == group_of_[c] && joins(i, r);
      if (ok && members_[group_of_[c]].size() < kMaxGroupNodes) target = group_of_[c];
    }
    if (target < 0) {
      target = static_cast<int>(members_.size());
      members_.emplace_back();
    }
    group_of_[i] = target;
    members_[target].push_back(i);
  }
  std::vector<FusionGroup> groups;
  for (auto &m : members_) {
    std::reverse(m.begin(), m.end());
    groups.push_back({kind_of_group(m), m, {}});
  }
  // Kernels run in the order of their roots.
  std::sort(groups.begin(), groups.end(),
            [](const FusionGroup &a, const FusionGroup &b) { return a.nodes.back() < b.nodes.back(); });
  for (auto &gr : groups) {
    std::set<int> mine(gr.nodes.begin(), gr.nodes.end());
    for (int node : gr.nodes)
      for (int o : g_.nodes[node].outputs) {
        if (o < 0) continue;
        bool leaves = graph_outputs.count(o) != 0;
        for (int c : consumers_[o]) leaves = leaves || !mine.count(c);
        if (leaves) gr.outputs.push_back(o);
      }
  }
  // A kernel whose outputs no one reads is dead: torchvision's `o[0].shape` leaves a Gather read only
  // by a (folded) Shape once shapes are symbolic, and a kernel with no outputs is no Halide pipeline.
  // Host ops stay: their output extents may bind symbols (lowering/ops/run_time_dims.h).
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [](const FusionGroup &gr) { return gr.kind != GroupKind::Host && gr.outputs.empty(); }),
               groups.end());
  // Host ops read buffers: constant or folded inputs get written by a Copy group first.
  std::vector<FusionGroup> with_copies;
  for (auto &gr : groups) {
    if (gr.kind == GroupKind::Host)
      for (int in : g_.nodes[gr.nodes[0]].inputs)
        if (in >= 0 && (g_.value(in).constant || g_.value(in).sym_value))
          with_copies.push_back({GroupKind::Copy, {}, {in}});
    with_copies.push_back(std::move(gr));
  }
  groups = std::move(with_copies);
  if (!copy_outputs) return groups;
  // Graph outputs no kernel writes: inputs, constants, folded values, repeats.
  std::set<int> written;
  for (const auto &gr : groups) written.insert(gr.outputs.begin(), gr.outputs.end());
  std::set<int> seen;
  for (int o : g_.outputs) {
    if (!written.count(o) || seen.count(o)) groups.push_back({GroupKind::Copy, {}, {o}});
    seen.insert(o);
  }
  return groups;
}

}  // namespace

int row_reduction_axis(const Graph &g, const Node &n) {
  const bool softmax = n.op_type == "Softmax" || n.op_type == "LogSoftmax";
  if (!n.domain.empty() || (!softmax && n.op_type != "LayerNormalization")) return -1;
  if (n.inputs.empty() || n.inputs[0] < 0 || !g.value(n.inputs[0]).shape) return -1;
  const int64_t rank = static_cast<int64_t>(g.value(n.inputs[0]).shape->size());
  if (rank == 0) return -1;
  // Softmax before opset 13 normalizes the 2-D coercion's rows: axis..end; from 13 on the axis alone.
  const bool coerced = softmax && n.opset < 13;
  int64_t axis = -1;
  if (auto it = n.attrs.find("axis"); it != n.attrs.end() && it->second.kind == Attribute::Int)
    axis = it->second.i;
  else if (coerced)
    axis = 1;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return -1;
  if (softmax && !coerced && axis != rank - 1) return -1;  // an inner axis: not a row
  return static_cast<int>(axis);
}

std::vector<FusionGroup> plan_fusion(const Graph &g, const ShapeStore &store) {
  const std::vector<bool> all(g.nodes.size(), true);
  return Planner(g, store, all).run(true);
}

std::vector<FusionGroup> plan_region_fusion(const Graph &g, const ShapeStore &store, const std::vector<int> &nodes) {
  std::vector<bool> in_scope(g.nodes.size(), false);
  for (int x : nodes) in_scope.at(x) = true;
  return Planner(g, store, in_scope).run(false);
}

}  // namespace disco
