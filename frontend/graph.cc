#include "frontend/graph.h"

#include "frontend/errors.h"

namespace disco {

std::string Node::where() const { return "node '" + name + "' (" + op_type + ")"; }

int Graph::add_value(const std::string &n, DType t) {
  DISCO_CHECK(n.empty() || find_value(n) < 0, "value '", n, "' is defined twice");
  Value v;
  v.name = n.empty() ? "_v" + std::to_string(values.size()) : n;
  v.dtype = t;
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

int Graph::add_constant(const std::string &n, TensorData t) {
  const int id = add_value(n, t.dtype);
  values[static_cast<size_t>(id)].shape = Shape(t.shape.begin(), t.shape.end());
  values[static_cast<size_t>(id)].constant = std::move(t);
  return id;
}

int Graph::find_value(const std::string &n) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == n) return static_cast<int>(i);
  return -1;
}

void Graph::sort_nodes() {
  std::vector<bool> ready(values.size(), false);
  for (int i : inputs) ready[i] = true;
  for (size_t v = 0; v < values.size(); ++v)
    if (values[v].constant) ready[v] = true;
  std::vector<Node> sorted;
  std::vector<bool> done(nodes.size(), false);
  bool progress = true;
  while (sorted.size() < nodes.size() && progress) {
    progress = false;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (done[n]) continue;
      bool ok = true;
      for (int in : nodes[n].inputs) ok = ok && (in < 0 || ready[in]);
      if (!ok) continue;
      for (int out : nodes[n].outputs) ready[out] = true;
      done[n] = true;
      sorted.push_back(nodes[n]);
      progress = true;
    }
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (done[n]) continue;
    for (int in : nodes[n].inputs)
      if (in >= 0 && !ready[in])
        fail(nodes[n].where(), ": input '", values[in].name, "' is never produced (or the graph has a cycle)");
  }
  nodes = std::move(sorted);
  for (auto &v : values) v.producer = -1;
  for (size_t n = 0; n < nodes.size(); ++n)
    for (int out : nodes[n].outputs) values[out].producer = static_cast<int>(n);
}

bool node_is_folded(const Graph &g, const Node &n) {
  for (int o : n.outputs)
    if (o >= 0 && !g.value(o).constant && !g.value(o).sym_value) return false;
  return true;
}

}  // namespace disco
