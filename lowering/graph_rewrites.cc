#include "lowering/graph_rewrites.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "frontend/attributes.h"
#include "lowering/known_values.h"

namespace disco {

namespace {

// How many node inputs and graph outputs read each value.
std::vector<int> use_counts(const Graph &g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const auto &n : g.nodes)
    for (int in : n.inputs)
      if (in >= 0) ++uses[static_cast<size_t>(in)];
  for (int out : g.outputs) ++uses[static_cast<size_t>(out)];
  return uses;
}

// The float32 constant's values along the channel axis (length `channels`),
// when it broadcasts against [..., channels] along that axis only.
std::optional<std::vector<float>> channel_values(const Value &v, int64_t channels, size_t max_rank) {
  if (!v.constant || v.constant->dtype != DType::F32) return std::nullopt;
  const TensorData &t = *v.constant;
  if (t.shape.size() > max_rank) return std::nullopt;
  const int64_t n = t.num_elements();
  for (size_t i = 0; i + 1 < t.shape.size(); ++i)
    if (t.shape[i] != 1) return std::nullopt;
  if (n != 1 && n != channels) return std::nullopt;
  std::vector<float> out(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i) out[static_cast<size_t>(i)] = t.as<float>()[n == 1 ? 0 : i];
  return out;
}

int add_constant(Graph &g, const std::string &name, const std::vector<float> &values) {
  TensorData t(DType::F32, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.mutable_as<float>());
  return g.add_constant(name, std::move(t));
}

// Folds the Mul or Add that alone reads LayerNormalization `ln`'s output;
// returns the index of the node to drop, or -1.
int fold_next(Graph &g, size_t ln, const std::vector<int> &uses) {
  Node &norm = g.nodes[ln];
  const int y = norm.outputs[0];
  if (uses[static_cast<size_t>(y)] != 1) return -1;
  for (size_t k = 1; k < norm.outputs.size(); ++k)
    if (norm.outputs[k] >= 0 && uses[static_cast<size_t>(norm.outputs[k])] > 0) return -1;
  const Value &x = g.value(norm.inputs[0]);
  if (!x.shape || x.shape->empty() || !x.shape->back().is_const() || x.dtype != DType::F32) return -1;
  const int64_t rank = static_cast<int64_t>(x.shape->size());
  int64_t axis = AttrReader(norm.attrs, norm.where()).get_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return -1;
  const int64_t channels = x.shape->back().as_const();

  for (size_t i = ln + 1; i < g.nodes.size(); ++i) {
    Node &next = g.nodes[i];
    auto reads = std::find(next.inputs.begin(), next.inputs.end(), y);
    if (reads == next.inputs.end()) continue;
    if (!next.domain.empty() || (next.op_type != "Mul" && next.op_type != "Add") || next.inputs.size() != 2) return -1;
    const int other = next.inputs[reads == next.inputs.begin() ? 1 : 0];
    auto c = channel_values(g.value(other), channels, x.shape->size());
    auto scale = channel_values(g.value(norm.inputs[1]), channels, 1);
    if (!c || !scale) return -1;
    std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
    if (norm.inputs.size() > 2 && norm.inputs[2] >= 0) {
      auto b = channel_values(g.value(norm.inputs[2]), channels, 1);
      if (!b) return -1;
      bias = *b;
    }
    for (size_t j = 0; j < bias.size(); ++j) {
      if (next.op_type == "Mul") {
        (*scale)[j] *= (*c)[j];
        bias[j] *= (*c)[j];
      } else {
        bias[j] += (*c)[j];
      }
    }
    const std::string base = norm.name + "/folded_" + next.name;
    norm.inputs[1] = add_constant(g, base + "_scale", *scale);
    const int b = add_constant(g, base + "_bias", bias);
    if (norm.inputs.size() > 2)
      norm.inputs[2] = b;
    else
      norm.inputs.push_back(b);
    norm.outputs[0] = next.outputs[0];
    return static_cast<int>(i);
  }
  return -1;
}

bool never_negative(const Node &n) {
  static const char *const kOps[] = {"Softmax", "Sigmoid", "Exp", "Relu", "Abs"};
  return n.domain.empty() && std::find_if(std::begin(kOps), std::end(kOps),
                                          [&](const char *op) { return n.op_type == op; }) != std::end(kOps);
}

void renumber_producers(Graph &g) {
  for (auto &v : g.values) v.producer = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int out : g.nodes[i].outputs)
      if (out >= 0) g.value(out).producer = static_cast<int>(i);
}

// Removes the nodes marked in `dropped` (if any), keeping the others in order.
void erase_nodes(Graph &g, const std::vector<bool> &dropped) {
  if (std::find(dropped.begin(), dropped.end(), true) == dropped.end()) return;
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dropped[i]) nodes.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(nodes);
  renumber_producers(g);
}

bool has_subgraphs(const Graph &g) {
  for (const auto &n : g.nodes)
    if (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan") return true;
  return false;
}

// ---- GELU ----------------------------------------------------------------------

// The folded GELU is ai.onnx's Gelu, which opset 20 introduced: a node of its
// own opset in a graph that imports an older one (lowering/ops registers Gelu
// from 20 on, and the oneDNN rules fuse its erf form as a post-op).
constexpr int kGeluOpset = 20;

// How a GELU decomposed into elementwise nodes reads: which node produces
// which value, and who reads it. Every value inside the pattern but x must
// have exactly one reader (the pattern's next node) and not be a graph output.
class GeluMatcher {
 public:
  GeluMatcher(const Graph &g, const std::vector<int> &uses) : g_(g), uses_(uses) {
    readers_.resize(g.values.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int in : g.nodes[i].inputs)
        if (in >= 0) readers_[static_cast<size_t>(in)] = static_cast<int>(i);
  }

  struct Match {
    int x = -1, out = -1;    // the GELU's input and output values
    std::vector<int> nodes;  // the pattern's nodes, the last one writing `out`
    bool tanh = false;       // the tanh approximation
  };

  // The GELU whose Erf or Tanh is node `n`, if it is one.
  std::optional<Match> at(int n) const {
    const Node &core = g_.nodes[static_cast<size_t>(n)];
    if (!plain(core, 1) || !is_float(core.outputs[0])) return std::nullopt;
    Match m;
    m.tanh = core.op_type == "Tanh";
    if (core.op_type != "Erf" && !m.tanh) return std::nullopt;
    const int arg = core.inputs[0];
    if (!inner(arg)) return std::nullopt;
    const int scaled_node = producer(arg);
    if (!m.tanh) {
      // x / sqrt 2, or x * (1 / sqrt 2).
      m.x = other_operand_if_scaling(scaled_node, kInvSqrt2);
      if (m.x < 0) return std::nullopt;
      m.nodes.push_back(scaled_node);
    } else {
      // sqrt(2/pi) (x + 0.044715 x^3).
      const int sum = other_operand_if_scaling(scaled_node, kSqrt2OverPi);
      if (sum < 0 || !inner(sum) || !cubic_sum(producer(sum), &m)) return std::nullopt;
      m.nodes.push_back(producer(sum));
      m.nodes.push_back(scaled_node);
    }
    m.nodes.push_back(n);
    // 1 + erf(...), then the product with x and 1/2 in any grouping.
    const int plus = reader_of(core.outputs[0]);
    if (plus < 0 || !adds(plus, core.outputs[0], 1.0)) return std::nullopt;
    m.nodes.push_back(plus);
    if (!halved_product(m.x, g_.nodes[static_cast<size_t>(plus)].outputs[0], &m)) return std::nullopt;
    if (g_.value(m.out).dtype != g_.value(m.x).dtype) return std::nullopt;
    return m;
  }

 private:
  static constexpr double kInvSqrt2 = 0.70710678118654752, kSqrt2OverPi = 0.79788456080286536, kCubic = 0.044715;

  // A default-domain node with `n_in` inputs and one output.
  static bool plain(const Node &n, size_t n_in) {
    return n.domain.empty() && n.inputs.size() == n_in && n.outputs.size() == 1 && n.inputs[0] >= 0 &&
           (n_in < 2 || n.inputs[1] >= 0);
  }
  bool is_float(int v) const {
    const DType t = g_.value(v).dtype;
    return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
  }
  int producer(int v) const { return g_.value(v).producer; }
  // The only reader of v, when v has one and is no graph output.
  int reader_of(int v) const { return uses_[static_cast<size_t>(v)] == 1 ? readers_[static_cast<size_t>(v)] : -1; }
  // A value inside the pattern: produced by a node, read once, no graph output.
  bool inner(int v) const { return producer(v) >= 0 && uses_[static_cast<size_t>(v)] == 1; }
  // A scalar float constant that broadcasts into x's shape without growing it.
  std::optional<double> scalar(int v, int like) const {
    const Value &c = g_.value(v);
    const Value &x = g_.value(like);
    if (!c.constant || c.constant->num_elements() != 1 || c.constant->dtype != x.dtype || !x.shape ||
        c.constant->shape.size() > x.shape->size())
      return std::nullopt;
    return c.constant->float_at(0);
  }
  static bool near(double v, double want) { return std::fabs(v - want) <= 1e-4 * std::fabs(want); }

  // Node n = Add(v, c) or Add(c, v) with c a scalar constant near `want`.
  bool adds(int n, int v, double want) const {
    const Node &b = g_.nodes[static_cast<size_t>(n)];
    if (!plain(b, 2) || b.op_type != "Add" || b.inputs[0] == b.inputs[1]) return false;
    const int other = b.inputs[0] == v ? b.inputs[1] : b.inputs[1] == v ? b.inputs[0] : -1;
    if (other < 0) return false;
    auto c = scalar(other, v);
    return c && near(*c, want);
  }
  // Node n = Mul(v, c) / Mul(c, v) with c near `factor`, or Div(v, c) with
  // 1 / c near it: v, else -1.
  int other_operand_if_scaling(int n, double factor) const {
    if (n < 0) return -1;
    const Node &b = g_.nodes[static_cast<size_t>(n)];
    if (!plain(b, 2) || b.inputs[0] == b.inputs[1]) return -1;
    for (int k = 0; k < 2; ++k) {
      const int v = b.inputs[static_cast<size_t>(k)], c = b.inputs[static_cast<size_t>(1 - k)];
      auto cv = scalar(c, v);
      if (!cv) continue;
      if (b.op_type == "Mul" && near(*cv, factor)) return v;
      if (b.op_type == "Div" && k == 0 && *cv != 0 && near(1 / *cv, factor)) return v;
    }
    return -1;
  }

  // Node n = Add(x, 0.044715 x^3) in either order, x^3 as Pow(x, 3) or
  // (x x) x in any grouping; sets m->x and adds the nodes.
  bool cubic_sum(int n, Match *m) const {
    const Node &add = g_.nodes[static_cast<size_t>(n)];
    if (!plain(add, 2) || add.op_type != "Add") return false;
    for (int k = 0; k < 2; ++k) {
      const int x = add.inputs[static_cast<size_t>(k)], term = add.inputs[static_cast<size_t>(1 - k)];
      if (!inner(term)) continue;
      const int cube = other_operand_if_scaling(producer(term), kCubic);
      if (cube < 0 || !inner(cube)) continue;
      std::vector<int> cube_nodes;
      if (!is_cube_of(producer(cube), x, &cube_nodes)) continue;
      m->x = x;
      m->nodes.insert(m->nodes.end(), cube_nodes.begin(), cube_nodes.end());
      m->nodes.push_back(producer(term));
      return true;
    }
    return false;
  }
  bool is_cube_of(int n, int x, std::vector<int> *nodes) const {
    const Node &c = g_.nodes[static_cast<size_t>(n)];
    if (c.op_type == "Pow" && plain(c, 2) && c.inputs[0] == x) {
      auto e = scalar(c.inputs[1], x);
      if (!e || *e != 3.0) return false;
      nodes->push_back(n);
      return true;
    }
    if (c.op_type != "Mul" || !plain(c, 2)) return false;
    for (int k = 0; k < 2; ++k) {
      const int a = c.inputs[static_cast<size_t>(k)], sq = c.inputs[static_cast<size_t>(1 - k)];
      if (a != x || !inner(sq)) continue;
      const Node &s = g_.nodes[static_cast<size_t>(producer(sq))];
      if (s.op_type == "Mul" && plain(s, 2) && s.inputs[0] == x && s.inputs[1] == x) {
        nodes->push_back(producer(sq));
        nodes->push_back(n);
        return true;
      }
    }
    return false;
  }

  // x * p * 1/2 in any grouping, p = 1 + erf(...): (x p) / 2, (x / 2) p,
  // x (p / 2), with Mul by 1/2 or Div by 2; sets m->out and adds the nodes.
  bool halved_product(int x, int p, Match *m) const {
    const int first = reader_of(p);
    if (first < 0) return false;
    if (other_operand_if_scaling(first, 0.5) == p) return times_x(first, x, m);  // x (p / 2)
    const Node &f = g_.nodes[static_cast<size_t>(first)];
    if (!plain(f, 2) || f.op_type != "Mul" || f.inputs[0] == f.inputs[1]) return false;
    const int other = f.inputs[0] == p ? f.inputs[1] : f.inputs[0];
    m->nodes.push_back(first);
    if (other == x) {  // (x p) / 2
      const int v = f.outputs[0], half = reader_of(v);
      if (half < 0 || other_operand_if_scaling(half, 0.5) != v) return false;
      m->nodes.push_back(half);
      m->out = g_.nodes[static_cast<size_t>(half)].outputs[0];
      return true;
    }
    // (x / 2) p
    if (!inner(other) || other_operand_if_scaling(producer(other), 0.5) != x) return false;
    m->nodes.push_back(producer(other));
    m->out = f.outputs[0];
    return true;
  }
  // Node `half` writes p / 2, read once by a Mul with x.
  bool times_x(int half, int x, Match *m) const {
    const int v = g_.nodes[static_cast<size_t>(half)].outputs[0], prod = reader_of(v);
    if (prod < 0) return false;
    const Node &n = g_.nodes[static_cast<size_t>(prod)];
    if (!plain(n, 2) || n.op_type != "Mul" ||
        !((n.inputs[0] == v && n.inputs[1] == x) || (n.inputs[1] == v && n.inputs[0] == x)))
      return false;
    m->nodes.push_back(half);
    m->nodes.push_back(prod);
    m->out = n.outputs[0];
    return true;
  }

  const Graph &g_;
  const std::vector<int> &uses_;
  std::vector<int> readers_;  // the last reader of each value (the only one where uses == 1)
};

}  // namespace

int fold_affine_into_layernorm(Graph &g) {
  if (has_subgraphs(g)) return 0;  // a body may read a value by name
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op_type != "LayerNormalization" || !g.nodes[i].domain.empty()) continue;
    for (int drop; (drop = fold_next(g, i, use_counts(g))) >= 0; ++removed) g.nodes.erase(g.nodes.begin() + drop);
  }
  if (removed > 0) renumber_producers(g);
  return removed;
}

// Drops each node that `accept(node, producer, uses)` takes and whose input 0
// some node produces for it alone, in its output 0's dtype: the producer
// writes that output instead, so no value gains or loses a reader.
template <class Accept>
int drop_into_producers(Graph &g, Accept accept) {
  if (has_subgraphs(g)) return 0;  // a body may read a value by name
  const std::vector<int> uses = use_counts(g);
  std::vector<bool> dropped(g.nodes.size(), false);
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node &n = g.nodes[i];
    if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty() || n.outputs[0] < 0) continue;
    const int x = n.inputs[0];
    const int p = x >= 0 ? g.value(x).producer : -1;
    if (p < 0 || uses[static_cast<size_t>(x)] != 1 || g.value(x).dtype != g.value(n.outputs[0]).dtype ||
        !accept(n, g.nodes[p], uses))
      continue;
    std::replace(g.nodes[p].outputs.begin(), g.nodes[p].outputs.end(), x, n.outputs[0]);
    g.value(n.outputs[0]).producer = p;  // a node after this one sees the producer itself
    dropped[i] = true;
    ++removed;
  }
  erase_nodes(g, dropped);
  return removed;
}

int drop_redundant_relu(Graph &g) {
  return drop_into_producers(g, [](const Node &n, const Node &producer, const std::vector<int> &) {
    return n.op_type == "Relu" && never_negative(producer);
  });
}

int drop_pass_through_nodes(Graph &g) {
  return drop_into_producers(g, [](const Node &n, const Node &, const std::vector<int> &uses) {
    if (n.op_type == "Identity") return true;
    // Shape inference has refused a Dropout that is not the identity; its mask must be unread.
    return n.op_type == "Dropout" &&
           (n.outputs.size() < 2 || n.outputs[1] < 0 || uses[static_cast<size_t>(n.outputs[1])] == 0);
  });
}

int fold_gelu(Graph &g) {
  if (has_subgraphs(g)) return 0;
  const std::vector<int> uses = use_counts(g);
  const GeluMatcher matcher(g, uses);
  std::vector<bool> dropped(g.nodes.size(), false);
  std::vector<Node> gelus;  // by the index of the node each replaces
  std::vector<int> at;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto m = matcher.at(static_cast<int>(i));
    if (!m) continue;
    bool overlaps = false;
    for (int n : m->nodes) overlaps = overlaps || dropped[static_cast<size_t>(n)];
    if (overlaps) continue;
    for (int n : m->nodes) dropped[static_cast<size_t>(n)] = true;
    const int last = g.value(m->out).producer;
    Node gelu;
    gelu.name = g.nodes[static_cast<size_t>(last)].name + "/gelu";
    gelu.op_type = "Gelu";
    gelu.opset = kGeluOpset;
    gelu.inputs = {m->x};
    gelu.outputs = {m->out};
    Attribute approximate;
    approximate.kind = Attribute::String;
    approximate.s = m->tanh ? "tanh" : "none";
    gelu.attrs["approximate"] = approximate;
    gelus.push_back(std::move(gelu));
    at.push_back(last);
  }
  if (gelus.empty()) return 0;
  // Each Gelu takes the place of its last node: x comes before every node of
  // the pattern, and every reader of the output after it.
  std::vector<Node> nodes;
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto k = std::find(at.begin(), at.end(), static_cast<int>(i));
    if (k != at.end()) {
      nodes.push_back(std::move(gelus[static_cast<size_t>(k - at.begin())]));
      --removed;
    }
    if (dropped[i])
      ++removed;
    else
      nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  renumber_producers(g);
  return removed;
}

namespace {

// The spatial pads of Pad node `n` when it pads only the spatial dims of a
// rank-`rank` tensor with zeros by constant, non-negative amounts (ONNX
// order: every dim's begin, then every dim's end), else nothing.
std::optional<std::vector<int64_t>> zero_spatial_pads(const Graph &g, const Node &n, size_t rank) {
  const AttrReader a(n.attrs, n.where());
  if (a.get_string("mode", "constant") != "constant") return std::nullopt;
  std::vector<int64_t> pads;
  if (n.opset < 11) {
    if (a.get_float("value", 0.0f) != 0.0f || !a.has("pads")) return std::nullopt;
    pads = a.get_ints("pads");
  } else {
    if (n.inputs.size() > 3 && n.inputs[3] >= 0) return std::nullopt;  // axes (opset 18)
    const TensorData *p = constant_input(g, n, 1), *value = constant_input(g, n, 2);
    if (!p || (n.inputs.size() > 2 && n.inputs[2] >= 0 && (!value || value->num_elements() != 1)))
      return std::nullopt;
    if (value && value->float_at(0) != 0.0) return std::nullopt;
    pads = p->to_int64();
  }
  if (pads.size() != 2 * rank) return std::nullopt;
  std::vector<int64_t> spatial;
  for (size_t half = 0; half < 2; ++half)
    for (size_t d = 0; d < rank; ++d) {
      const int64_t v = pads[half * rank + d];
      if (v < 0 || (d < 2 && v != 0)) return std::nullopt;
      if (d >= 2) spatial.push_back(v);
    }
  return spatial;
}

}  // namespace

int fold_pad_into_average_pool(Graph &g) {
  if (has_subgraphs(g)) return 0;
  const std::vector<int> uses = use_counts(g);
  std::vector<bool> dropped(g.nodes.size(), false);
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node &pool = g.nodes[i];
    if (pool.op_type != "AveragePool" || !pool.domain.empty() || pool.inputs.empty() || pool.inputs[0] < 0) continue;
    const int x = pool.inputs[0], p = g.value(x).producer;
    if (p < 0 || uses[static_cast<size_t>(x)] != 1 || g.nodes[p].op_type != "Pad" || !g.nodes[p].domain.empty() ||
        g.nodes[p].inputs.empty() || g.nodes[p].inputs[0] < 0 || !g.value(x).shape)
      continue;
    const size_t rank = g.value(x).shape->size();
    const AttrReader a(pool.attrs, pool.where());
    if (rank < 3 || a.get_string("auto_pad", "NOTSET") != "NOTSET" || a.get_int("ceil_mode", 0) != 0) continue;
    const size_t spatial = rank - 2;
    if (auto dil = a.get_ints_opt("dilations"))
      if (std::any_of(dil->begin(), dil->end(), [](int64_t d) { return d != 1; })) continue;
    std::vector<int64_t> own = a.get_ints_opt("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
    // The pool's own padding counts in its averages only with count_include_pad.
    if (own.size() != 2 * spatial ||
        (a.get_int("count_include_pad", 0) == 0 && std::any_of(own.begin(), own.end(), [](int64_t v) { return v; })))
      continue;
    const auto pads = zero_spatial_pads(g, g.nodes[p], rank);
    if (!pads) continue;
    // (Attributes built here: frontend/graph_builder.h's helpers live in a library lowering does not link.)
    Attribute padded, counted;
    padded.kind = Attribute::Ints;
    for (size_t k = 0; k < own.size(); ++k) padded.ints.push_back(own[k] + (*pads)[k]);
    counted.kind = Attribute::Int;
    counted.i = 1;
    pool.attrs["pads"] = padded;
    pool.attrs["count_include_pad"] = counted;
    pool.inputs[0] = g.nodes[p].inputs[0];
    dropped[static_cast<size_t>(p)] = true;
    ++removed;
  }
  erase_nodes(g, dropped);
  return removed;
}

int rewrite_graph(Graph &g) {
  return drop_pass_through_nodes(g) + fold_affine_into_layernorm(g) + drop_redundant_relu(g) + fold_gelu(g) +
         fold_pad_into_average_pool(g);
}

}  // namespace disco
