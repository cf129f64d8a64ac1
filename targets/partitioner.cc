#include "targets/partitioner.h"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

#include "frontend/errors.h"
#include "frontend/graph.h"

namespace disco {

namespace {

bool is_data(const Graph &g, int vid) {
  return vid >= 0 && !g.value(vid).constant && !g.value(vid).sym_value;
}

// Data edges between kernel nodes; folded nodes (shape arithmetic) take part in none.
struct DataGraph {
  std::vector<bool> folded;
  std::vector<std::vector<int>> succ, pred;
  std::vector<int> producer;  // value id -> node, -1 for graph inputs and constants

  explicit DataGraph(const Graph &g) {
    const int n = static_cast<int>(g.nodes.size());
    folded.resize(n);
    succ.resize(n);
    pred.resize(n);
    producer.assign(g.values.size(), -1);
    for (int i = 0; i < n; ++i) {
      folded[i] = node_is_folded(g, g.nodes[i]);
      for (int o : g.nodes[i].outputs)
        if (o >= 0) producer[o] = i;
    }
    for (int i = 0; i < n; ++i) {
      if (folded[i]) continue;
      std::set<int> ps;
      for (int in : g.nodes[i].inputs)
        if (is_data(g, in) && producer[in] >= 0 && !folded[producer[in]]) ps.insert(producer[in]);
      for (int p : ps) {
        pred[i].push_back(p);
        succ[p].push_back(i);
      }
    }
  }
};

// True when the nodes form a convex set: no path leaves the set and comes back.
bool is_convex(const DataGraph &dg, const std::vector<int> &nodes) {
  std::set<int> in(nodes.begin(), nodes.end());
  std::vector<int> stack;
  std::set<int> seen;
  for (int n : nodes)
    for (int s : dg.succ[n])
      if (!in.count(s) && seen.insert(s).second) stack.push_back(s);
  while (!stack.empty()) {
    int x = stack.back();
    stack.pop_back();
    for (int s : dg.succ[x]) {
      if (in.count(s)) return false;
      if (seen.insert(s).second) stack.push_back(s);
    }
  }
  return true;
}

// True when the graph quotiented by `group` (node -> group id; unassigned
// nodes are singletons) has no cycle.
bool quotient_is_acyclic(const DataGraph &dg, const std::vector<int> &group) {
  const int n = static_cast<int>(group.size());
  auto gid = [&](int node) { return group[node] >= 0 ? group[node] : n + node; };
  std::map<int, std::set<int>> edges;
  for (int a = 0; a < n; ++a)
    for (int b : dg.succ[a])
      if (gid(a) != gid(b)) edges[gid(a)].insert(gid(b));
  std::map<int, int> state;  // 1 visiting, 2 done
  std::function<bool(int)> dfs = [&](int v) {
    state[v] = 1;
    for (int w : edges[v]) {
      if (state[w] == 1) return false;
      if (state[w] == 0 && !dfs(w)) return false;
    }
    state[v] = 2;
    return true;
  };
  for (auto &[v, _] : edges)
    if (state[v] == 0 && !dfs(v)) return false;
  return true;
}

bool rule_matches(const SupportRule &r, const Node &node) {
  if (r.ops.empty()) return true;  // a rule for every op (the host backend)
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  return std::find(r.ops.begin(), r.ops.end(), node.op_type) != r.ops.end();
}

struct Annotation {
  std::vector<int> owner;       // node -> backend index
  std::vector<Unit> units;
  std::vector<int> unit_backend;
};

Annotation annotate(const Graph &g, const MatchContext &ctx, const DataGraph &dg,
                    const std::vector<const Backend *> &backends, const std::vector<std::vector<std::string>> &rules_of,
                    const std::vector<std::vector<SupportRule>> &rules, const std::set<std::pair<int, int>> &banned) {
  (void)rules_of;
  const int n = static_cast<int>(g.nodes.size());
  Annotation a;
  a.owner.assign(n, -1);
  for (size_t bi = 0; bi < backends.size(); ++bi) {
    for (int i = 0; i < n; ++i) {
      if (dg.folded[i] || a.owner[i] >= 0 || banned.count({i, static_cast<int>(bi)})) continue;
      for (const auto &rule : rules[bi]) {
        if (!rule_matches(rule, g.nodes[i])) continue;
        std::string why;
        std::vector<int> unit = rule.check(ctx, i, &why);
        if (unit.empty()) continue;
        bool ok = unit[0] == i;
        for (int u : unit)
          ok = ok && u >= 0 && u < n && !dg.folded[u] && a.owner[u] < 0 && !banned.count({u, static_cast<int>(bi)});
        if (!ok || !is_convex(dg, unit)) continue;
        for (int u : unit) a.owner[u] = static_cast<int>(bi);
        a.units.push_back({rule.name, unit});
        a.unit_backend.push_back(static_cast<int>(bi));
        break;
      }
    }
  }
  for (int i = 0; i < n; ++i)
    if (!dg.folded[i] && a.owner[i] < 0)
      fail("node '", g.nodes[i].name, "' (", g.nodes[i].op_type, "): no backend in the list takes it");
  return a;
}

}  // namespace

Partition partition_graph(const Graph &g, const ShapeStore &store, const std::vector<const Backend *> &backends,
                          const PartitionOptions &opts) {
  DISCO_CHECK(!backends.empty(), "no backends to partition for");
  const int n = static_cast<int>(g.nodes.size());
  MatchContext ctx(g, store);
  DataGraph dg(g);
  std::vector<std::vector<SupportRule>> rules;
  for (const Backend *b : backends) rules.push_back(b->rules());

  Partition p;
  p.accepted_by.assign(n, {});
  // Step 1, for inspect: every backend whose rules take the node, ignoring the others.
  for (size_t bi = 0; bi < backends.size(); ++bi)
    for (int i = 0; i < n; ++i) {
      if (dg.folded[i]) continue;
      for (const auto &rule : rules[bi]) {
        if (!rule_matches(rule, g.nodes[i])) continue;
        std::string why;
        std::vector<int> unit = rule.check(ctx, i, &why);
        if (unit.empty()) {
          if (!rule.ops.empty() && !why.empty())
            p.notes.push_back(backends[bi]->name() + " declines " + g.nodes[i].name + " (" + g.nodes[i].op_type +
                              "): " + why);
          continue;
        }
        for (int u : unit)
          if (u >= 0 && u < n) {
            auto &acc = p.accepted_by[u];
            if (std::find(acc.begin(), acc.end(), backends[bi]->name()) == acc.end()) acc.push_back(backends[bi]->name());
          }
      }
    }

  std::set<std::pair<int, int>> banned;  // (node, backend index) pairs dropped for being too small
  for (int round = 0;; ++round) {
    DISCO_CHECK(round <= n * static_cast<int>(backends.size()) + 1, "internal: partitioning does not converge");
    Annotation a = annotate(g, ctx, dg, backends, {}, rules, banned);
    // Step 2: merge units into regions, in the order of their first node.
    std::vector<size_t> order(a.units.size());
    for (size_t u = 0; u < order.size(); ++u) order[u] = u;
    auto first = [&](size_t u) { return *std::min_element(a.units[u].nodes.begin(), a.units[u].nodes.end()); };
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return first(x) < first(y); });
    std::vector<int> group(n, -1);
    std::vector<int> region_backend;
    std::vector<std::vector<size_t>> region_units;
    for (size_t u : order) {
      const Unit &unit = a.units[u];
      const int b = a.unit_backend[u];
      std::set<int> neighbours;
      for (int node : unit.nodes) {
        for (int q : dg.pred[node])
          if (group[q] >= 0 && region_backend[group[q]] == b) neighbours.insert(group[q]);
        for (int q : dg.succ[node])
          if (group[q] >= 0 && region_backend[group[q]] == b) neighbours.insert(group[q]);
      }
      int target = -1;
      for (int r : neighbours) {
        std::vector<int> trial = group;
        for (int node : unit.nodes) trial[node] = r;
        if (quotient_is_acyclic(dg, trial)) {
          target = r;
          break;
        }
      }
      if (target < 0) {
        target = static_cast<int>(region_backend.size());
        region_backend.push_back(b);
        region_units.emplace_back();
      }
      for (int node : unit.nodes) group[node] = target;
      region_units[target].push_back(u);
      // The unit may now join two regions of its backend: merge them when that stays acyclic.
      for (int r : neighbours) {
        if (r == target || region_units[r].empty()) continue;
        std::vector<int> trial = group;
        for (int &x : trial)
          if (x == r) x = target;
        if (!quotient_is_acyclic(dg, trial)) continue;
        group = trial;
        for (size_t ru : region_units[r]) region_units[target].push_back(ru);
        region_units[r].clear();
      }
    }
    // Step 3: drop small regions back to the next backend.
    bool dropped = false;
    for (size_t r = 0; r < region_units.size(); ++r) {
      if (region_units[r].empty()) continue;
      const Backend *be = backends[region_backend[r]];
      if (static_cast<size_t>(region_backend[r]) + 1 == backends.size()) continue;  // the last backend keeps all
      int min_nodes = be->min_region_nodes();
      if (auto it = opts.min_region_nodes.find(be->name()); it != opts.min_region_nodes.end()) min_nodes = it->second;
      int count = 0;
      for (size_t u : region_units[r]) count += static_cast<int>(a.units[u].nodes.size());
      if (count >= min_nodes) continue;
      std::string names;
      for (size_t u : region_units[r])
        for (int node : a.units[u].nodes) {
          banned.insert({node, region_backend[r]});
          names += (names.empty() ? "" : ", ") + g.nodes[node].name;
        }
      p.notes.push_back(be->name() + " region {" + names + "} has " + std::to_string(count) + " node(s), under its minimum of " +
                        std::to_string(min_nodes) + ": given to the next backend");
      dropped = true;
    }
    if (dropped) continue;

    // Order regions topologically (ties by first node, for determinism).
    std::vector<int> live;
    for (size_t r = 0; r < region_units.size(); ++r)
      if (!region_units[r].empty()) live.push_back(static_cast<int>(r));
    std::map<int, std::set<int>> deps;
    for (int x = 0; x < n; ++x)
      for (int y : dg.succ[x])
        if (group[x] != group[y]) deps[group[y]].insert(group[x]);
    std::map<int, int> first_node;
    for (int x = n - 1; x >= 0; --x)
      if (group[x] >= 0) first_node[group[x]] = x;
    std::vector<int> ordered;
    std::set<int> done;
    while (ordered.size() < live.size()) {
      int best = -1;
      for (int r : live) {
        if (done.count(r)) continue;
        bool ready = true;
        for (int d : deps[r]) ready = ready && done.count(d);
        if (ready && (best < 0 || first_node[r] < first_node[best])) best = r;
      }
      DISCO_CHECK(best >= 0, "internal: the region graph has a cycle");
      ordered.push_back(best);
      done.insert(best);
    }
    // Step 4: outline.
    p.region_of.assign(n, -1);
    std::set<int> graph_outputs(g.outputs.begin(), g.outputs.end());
    for (int r : ordered) {
      Region reg;
      reg.id = static_cast<int>(p.regions.size());
      reg.backend = backends[region_backend[r]]->name();
      for (size_t u : region_units[r]) reg.units.push_back(a.units[u]);
      std::sort(reg.units.begin(), reg.units.end(),
                [](const Unit &x, const Unit &y) { return x.nodes.front() < y.nodes.front(); });
      for (int x = 0; x < n; ++x)
        if (group[x] == r) reg.nodes.push_back(x);
      std::set<int> mine(reg.nodes.begin(), reg.nodes.end()), seen_in;
      std::set<std::string> syms;
      auto add_syms = [&](const Value &v) {
        std::set<std::string> s;
        if (v.shape)
          for (const Dim &d : *v.shape) store.canonical(d).collect_symbols(s);
        if (v.sym_value)
          for (const Dim &d : *v.sym_value) store.canonical(d).collect_symbols(s);
        syms.insert(s.begin(), s.end());
      };
      for (int x : reg.nodes) {
        p.region_of[x] = reg.id;
        for (int in : g.nodes[x].inputs) {
          if (in < 0) continue;
          add_syms(g.value(in));
          const int prod = dg.producer[in];
          if (is_data(g, in) && (prod < 0 || !mine.count(prod)) && seen_in.insert(in).second) reg.inputs.push_back(in);
        }
        for (int o : g.nodes[x].outputs) {
          if (o < 0) continue;
          add_syms(g.value(o));
          bool leaves = graph_outputs.count(o) != 0;
          for (int c : ctx.consumers(o)) leaves = leaves || !mine.count(c);
          if (leaves) reg.outputs.push_back(o);
        }
      }
      reg.symbols.assign(syms.begin(), syms.end());
      p.regions.push_back(std::move(reg));
    }
    return p;
  }
}

std::string describe_partition(const Graph &g, const Partition &p) {
  std::ostringstream os;
  auto value_text = [&](int vid) {
    const Value &v = g.value(vid);
    std::string s = v.name + ": " + dtype_name(v.dtype) + " [";
    if (v.shape)
      for (size_t d = 0; d < v.shape->size(); ++d) s += (d ? ", " : "") + (*v.shape)[d].str();
    return s + "]";
  };
  std::map<std::string, int> per_backend;
  for (const auto &r : p.regions) per_backend[r.backend] += 1;
  os << "regions: " << p.regions.size();
  for (const auto &[b, c] : per_backend) os << "  " << b << "=" << c;
  os << "\n";
  for (const auto &r : p.regions) {
    os << "region " << r.id << " [" << r.backend << "] " << r.nodes.size() << " node(s)";
    if (!r.symbols.empty()) {
      os << ", symbols:";
      for (const auto &s : r.symbols) os << " " << s;
    }
    os << "\n";
    // Multi-node units (patterns) one per line; single nodes of one rule share a line.
    for (size_t i = 0; i < r.units.size(); ++i) {
      const Unit &u = r.units[i];
      const bool joins = i > 0 && u.nodes.size() == 1 && r.units[i - 1].nodes.size() == 1 && r.units[i - 1].rule == u.rule;
      if (!joins) os << (i ? "\n" : "") << "  " << u.rule << ":";
      for (int x : u.nodes) os << " " << g.nodes[x].name << "(" << g.nodes[x].op_type << ")";
    }
    if (!r.units.empty()) os << "\n";
    for (int v : r.inputs) os << "  in  " << value_text(v) << "\n";
    for (int v : r.outputs) os << "  out " << value_text(v) << "\n";
  }
  for (const auto &note : p.notes) os << "note: " << note << "\n";
  return os.str();
}

}  // namespace disco
