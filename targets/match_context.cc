#include "targets/backend.h"
#include "frontend/graph.h"

namespace disco {

MatchContext::MatchContext(const Graph &g, const ShapeStore &store) : g_(g), store_(store) {
  consumers_.assign(g.values.size(), {});
  graph_output_.assign(g.values.size(), false);
  producer_.assign(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) producer_[o] = static_cast<int>(i);
  for (int o : g.outputs) graph_output_[o] = true;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (node_is_folded(g, g.nodes[i])) continue;
    for (int in : g.nodes[i].inputs) {
      if (in < 0) continue;
      auto &cs = consumers_[in];
      if (cs.empty() || cs.back() != static_cast<int>(i)) cs.push_back(static_cast<int>(i));
    }
  }
}

const std::vector<int> &MatchContext::consumers(int vid) const { return consumers_.at(vid); }

bool MatchContext::is_graph_output(int vid) const { return graph_output_.at(vid); }

int MatchContext::sole_consumer(int vid) const {
  const auto &cs = consumers_.at(vid);
  return cs.size() == 1 && !graph_output_[vid] ? cs[0] : -1;
}

bool MatchContext::scalar_constant(int vid, double *out) const {
  if (!is_constant(vid)) return false;
  const TensorData &t = *g_.value(vid).constant;
  if (t.num_elements() != 1) return false;
  *out = t.float_at(0);
  return true;
}

const Shape *MatchContext::shape_of(int vid) const {
  if (vid < 0) return nullptr;
  const Value &v = g_.value(vid);
  return v.shape ? &*v.shape : nullptr;
}

int MatchContext::rank_of(int vid) const {
  const Shape *s = shape_of(vid);
  return s ? static_cast<int>(s->size()) : -1;
}

std::string MatchContext::dtype_reason(const std::vector<int> &vids) const {
  for (int v : vids)
    if (v >= 0 && !is_f32(v))
      return "only float32 is supported; '" + value(v).name + "' is " + dtype_name(value(v).dtype);
  return "";
}

bool MatchContext::broadcasts_into(const Shape &small, const Shape &big) const {
  if (small.size() > big.size()) return false;
  const size_t off = big.size() - small.size();
  for (size_t i = 0; i < small.size(); ++i)
    if (!store_.canonical(small[i]).is_const(1) && !store_.same_dim(small[i], big[off + i])) return false;
  return true;
}

bool MatchContext::is_op(int node, const char *op) const {
  return node >= 0 && g_.nodes[node].op_type == op && is_default_domain(g_.nodes[node]);
}

bool MatchContext::only_first_output_read(const Node &n) const {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0 && (!consumers(n.outputs[i]).empty() || is_graph_output(n.outputs[i]))) return false;
  return !n.outputs.empty() && n.outputs[0] >= 0;
}

bool MatchContext::depends_on(int vid, int node) const {
  std::vector<int> stack{vid};
  std::vector<bool> seen(g_.values.size(), false);
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (v < 0 || seen[v]) continue;
    seen[v] = true;
    const int p = producer_[v];
    if (p < 0) continue;
    if (p == node) return true;
    for (int in : g_.nodes[p].inputs) stack.push_back(in);
  }
  return false;
}

}  // namespace disco
