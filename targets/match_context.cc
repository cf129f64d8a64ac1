#include "targets/backend.h"
#include "schedules/fusion.h"

namespace disco {

MatchContext::MatchContext(const Graph &g, const ShapeStore &store) : g_(g), store_(store) {
  consumers_.assign(g.values.size(), {});
  graph_output_.assign(g.values.size(), false);
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

}  // namespace disco
