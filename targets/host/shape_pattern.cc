#include "targets/host/shape_pattern.h"

#include <algorithm>
#include <optional>
#include <set>

#include "frontend/errors.h"

namespace disco {

namespace {

bool has_subgraph(const Node &n) {
  for (const auto &[name, a] : n.attrs)
    if (a.kind == Attribute::GraphAttr) return true;
  return false;
}

// The extent at the likely value of each of its symbols (--hint), when every
// one has one; the schedules specialize a branch for it.
std::vector<int64_t> likely_of(const ShapeStore &store, const Dim &e) {
  std::set<std::string> syms;
  e.collect_symbols(syms);
  SymbolValues at;
  for (const auto &s : syms) {
    if (!store.has_symbol(s) || store.facts(s).likely.empty()) return {};
    at[s] = store.facts(s).likely[0];
  }
  try {
    return {e.eval(at)};
  } catch (const std::exception &) {  // a division by zero at the hinted values
    return {};
  }
}

}  // namespace

ShapePattern::ShapePattern(Graph &scratch, const Graph &g, const ShapeStore &store, const FusionGroup &group)
    : scratch_(scratch), g_(g) {
  // A subgraph's values keep the model's symbols, and the kernel key never
  // shares such a group anyway.
  for (int n : group.nodes)
    if (has_subgraph(g.nodes[n])) return;
  std::vector<int> values;
  auto touch = [&](int vid) {
    if (vid >= 0 && std::find(values.begin(), values.end(), vid) == values.end()) values.push_back(vid);
  };
  for (int n : group.nodes) {
    for (int vid : g.nodes[n].inputs) touch(vid);
    for (int vid : g.nodes[n].outputs) touch(vid);
  }
  for (int vid : group.outputs) touch(vid);

  std::map<std::string, Dim> param_of;  // an extent's canonical text -> its parameter
  auto pattern_of = [&](const Dim &d) -> std::optional<Dim> {
    const Dim c = store.canonical(d);
    if (c.is_const()) return c;
    if (auto it = param_of.find(c.str()); it != param_of.end()) return it->second;
    // A parameter's min must hold; an extent without a lower bound (a product
    // of factors that may be negative) cannot be a parameter.
    const std::optional<int64_t> lo = store.lower_bound(c);
    if (!lo) return std::nullopt;
    const std::string name = "p" + std::to_string(params_.size());
    store_.declare_symbol(name, "extent " + c.str());
    SymbolFacts &f = store_.facts(name);
    f.min = *lo;
    f.divisor = std::max<int64_t>(store.divisor(c), 1);  // c is not constant, so not 0
    f.not_one = !store.can_be_one(c);
    f.likely = likely_of(store, c);
    params_.push_back(name);
    extent_.emplace(name, c);
    return param_of.emplace(c.str(), Dim::symbol(name)).first->second;
  };
  auto rewrite = [&](const std::vector<Dim> &dims) -> std::optional<std::vector<Dim>> {
    std::vector<Dim> out;
    for (const Dim &d : dims) {
      std::optional<Dim> p = pattern_of(d);
      if (!p) return std::nullopt;
      out.push_back(*p);
    }
    return out;
  };
  std::vector<std::pair<std::optional<Shape>, std::optional<std::vector<Dim>>>> rewritten;
  for (int vid : values) {
    const Value &v = g.value(vid);
    auto &[shape, dims] = rewritten.emplace_back();
    if (v.shape && !(shape = rewrite(*v.shape))) return;
    if (v.sym_value && !(dims = rewrite(*v.sym_value))) return;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    Value &v = scratch_.value(values[i]);
    v.shape = std::move(rewritten[i].first);
    v.sym_value = std::move(rewritten[i].second);
  }
  values_ = std::move(values);
  applies_ = true;
}

ShapePattern::~ShapePattern() {
  for (int vid : values_) {
    scratch_.value(vid).shape = g_.value(vid).shape;
    scratch_.value(vid).sym_value = g_.value(vid).sym_value;
  }
}

const Dim &ShapePattern::extent(const std::string &param) const {
  auto it = extent_.find(param);
  DISCO_CHECK(it != extent_.end(), "internal: '", param, "' is not a parameter of the kernel's shape pattern");
  return it->second;
}

}  // namespace disco
