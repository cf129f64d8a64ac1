#include "targets/partitioner.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "frontend/errors.h"
#include "frontend/graph.h"
#include "targets/plan_builder.h"

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
    add_symbol_edges(g);
  }

  // A host op that binds a symbol (NonZero's count, RunTimeDims's values:
  // lowering/ops/run_time_dims.h) must run before every kernel whose shapes
  // use it, even one that reads none of its data (a Pad whose pads are the
  // symbol, through a Shape). The binder of a symbol: the first kernel node
  // with it in an output's shape and in no input's; graph inputs bind theirs.
  void add_symbol_edges(const Graph &g) {
    auto syms_of = [&](int vid, bool with_value) {
      std::set<std::string> s;
      if (vid < 0) return s;
      const Value &v = g.value(vid);
      if (v.shape)
        for (const Dim &d : *v.shape) d.collect_symbols(s);
      if (with_value && v.sym_value)
        for (const Dim &d : *v.sym_value) d.collect_symbols(s);
      return s;
    };
    std::set<std::string> bound;
    for (int in : g.inputs)
      for (const auto &x : syms_of(in, false)) bound.insert(x);
    std::map<std::string, int> binder;
    const int n = static_cast<int>(g.nodes.size());
    for (int i = 0; i < n; ++i) {
      if (folded[i]) continue;
      std::set<std::string> used;
      for (int in : g.nodes[i].inputs)
        for (const auto &x : syms_of(in, true)) used.insert(x);
      std::set<int> ps;
      for (const auto &x : used)
        if (auto it = binder.find(x); it != binder.end()) ps.insert(it->second);
      for (int o : g.nodes[i].outputs)
        for (const auto &x : syms_of(o, false)) {
          if (auto it = binder.find(x); it != binder.end()) ps.insert(it->second);
          else if (!bound.count(x) && !used.count(x)) binder[x] = i;
        }
      for (int p : ps)
        if (p != i && std::find(pred[i].begin(), pred[i].end(), p) == pred[i].end()) {
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
  if (r.op.empty()) return true;  // a rule for every op (the host backend)
  return MatchContext::is_default_domain(node) && node.op_type == r.op;
}

// A check that throws (a malformed attribute) declines with the message: the
// next backend reports it properly.
Match run_check(const SupportRule &r, const MatchContext &ctx, int node) {
  try {
    return r.check(ctx, node);
  } catch (const Error &e) {
    return decline(e.what());
  }
}

using Bans = std::set<std::pair<int, int>>;  // (node, backend index) pairs a node may not go to

// What the partitioning steps work on; `scope` marks the nodes to place
// (every kernel node for partition_graph, one region's for reassign_declined).
struct Problem {
  const Graph &g;
  const ShapeStore &store;
  const MatchContext &ctx;
  const DataGraph &dg;
  const std::vector<const Backend *> &backends;
  const std::vector<std::vector<SupportRule>> &rules;
  const PartitionOptions &opts;
  std::vector<bool> scope;
};

struct Annotation {
  std::vector<int> owner;       // node -> backend index
  std::vector<Unit> units;
  std::vector<int> unit_backend;
};

// Step 1: a node goes to the first backend whose rule takes it in a unit.
Annotation annotate(const Problem &pr, const Bans &banned) {
  const int n = static_cast<int>(pr.g.nodes.size());
  Annotation a;
  a.owner.assign(n, -1);
  for (size_t bi = 0; bi < pr.backends.size(); ++bi) {
    for (int i = 0; i < n; ++i) {
      if (!pr.scope[i] || a.owner[i] >= 0 || banned.count({i, static_cast<int>(bi)})) continue;
      for (const auto &rule : pr.rules[bi]) {
        if (!rule_matches(rule, pr.g.nodes[i])) continue;
        Match m = run_check(rule, pr.ctx, i);
        if (!m.taken()) continue;
        bool ok = m.nodes[0] == i;
        for (int u : m.nodes)
          ok = ok && u >= 0 && u < n && pr.scope[u] && a.owner[u] < 0 && !banned.count({u, static_cast<int>(bi)});
        if (!ok || !is_convex(pr.dg, m.nodes)) continue;
        for (int u : m.nodes) a.owner[u] = static_cast<int>(bi);
        a.units.push_back({rule.name, std::move(m.nodes), std::move(m.payload)});
        a.unit_backend.push_back(static_cast<int>(bi));
        break;
      }
    }
  }
  for (int i = 0; i < n; ++i)
    if (pr.scope[i] && a.owner[i] < 0)
      fail("node '", pr.g.nodes[i].name, "' (", pr.g.nodes[i].op_type, "): no backend in the list takes it");
  return a;
}

// Steps 1 to 4 over the nodes in scope: the regions, in dependency order,
// numbered from 0. Dropped regions are noted in `notes`.
std::vector<Region> form_regions(const Problem &pr, Bans banned, std::vector<std::string> &notes) {
  const Graph &g = pr.g;
  const DataGraph &dg = pr.dg;
  const auto &backends = pr.backends;
  const int n = static_cast<int>(g.nodes.size());
  for (int round = 0;; ++round) {
    DISCO_CHECK(round <= n * static_cast<int>(backends.size()) + 1, "internal: partitioning does not converge");
    Annotation a = annotate(pr, banned);
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
      if (auto it = pr.opts.min_region_nodes.find(be->name()); it != pr.opts.min_region_nodes.end())
        min_nodes = it->second;
      int count = 0;
      for (size_t u : region_units[r]) count += static_cast<int>(a.units[u].nodes.size());
      if (count >= min_nodes) continue;
      std::string names;
      for (size_t u : region_units[r])
        for (int node : a.units[u].nodes) {
          banned.insert({node, region_backend[r]});
          names += (names.empty() ? "" : ", ") + g.nodes[node].name;
        }
      notes.push_back(be->name() + " region {" + names + "} has " + std::to_string(count) +
                      " node(s), under its minimum of " + std::to_string(min_nodes) + ": given to the next backend");
      dropped = true;
    }
    if (dropped) continue;

    // Order regions topologically (ties by first node, for determinism).
    std::vector<int> live;
    for (size_t r = 0; r < region_units.size(); ++r)
      if (!region_units[r].empty()) live.push_back(static_cast<int>(r));
    std::map<int, std::set<int>> deps;
    for (int x = 0; x < n; ++x)
      for (int y : dg.succ[x])  // nodes out of scope (group -1) are placed already
        if (group[x] >= 0 && group[y] >= 0 && group[x] != group[y]) deps[group[y]].insert(group[x]);
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
    std::vector<Region> regions;
    std::set<int> graph_outputs(g.outputs.begin(), g.outputs.end());
    for (int r : ordered) {
      Region reg;
      reg.id = static_cast<int>(regions.size());
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
          for (const Dim &d : *v.shape) pr.store.canonical(d).collect_symbols(s);
        if (v.sym_value)
          for (const Dim &d : *v.sym_value) pr.store.canonical(d).collect_symbols(s);
        syms.insert(s.begin(), s.end());
      };
      for (int x : reg.nodes) {
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
          for (int c : pr.ctx.consumers(o)) leaves = leaves || !mine.count(c);
          if (leaves) reg.outputs.push_back(o);
        }
      }
      reg.symbols.assign(syms.begin(), syms.end());
      regions.push_back(std::move(reg));
    }
    return regions;
  }
}

void number_regions(Partition &p, size_t nodes) {
  p.region_of.assign(nodes, -1);
  for (size_t r = 0; r < p.regions.size(); ++r) {
    p.regions[r].id = static_cast<int>(r);
    for (int x : p.regions[r].nodes) p.region_of[x] = static_cast<int>(r);
  }
}

std::vector<std::vector<SupportRule>> rules_of(const std::vector<const Backend *> &backends) {
  std::vector<std::vector<SupportRule>> rules;
  for (const Backend *b : backends) rules.push_back(b->rules());
  return rules;
}

}  // namespace

Partition partition_graph(const Graph &g, const ShapeStore &store, const std::vector<const Backend *> &backends,
                          const PartitionOptions &opts) {
  DISCO_CHECK(!backends.empty(), "no backends to partition for");
  const int n = static_cast<int>(g.nodes.size());
  const MatchContext ctx(g, store);
  const DataGraph dg(g);
  const auto rules = rules_of(backends);
  Problem pr{g, store, ctx, dg, backends, rules, opts, std::vector<bool>(n)};
  for (int i = 0; i < n; ++i) pr.scope[i] = !dg.folded[i];

  Partition p;
  p.accepted_by.assign(n, {});
  // For inspect: every backend whose rules take the node, ignoring the others.
  for (size_t bi = 0; bi < backends.size(); ++bi)
    for (int i = 0; i < n; ++i) {
      if (dg.folded[i]) continue;
      for (const auto &rule : rules[bi]) {
        if (!rule_matches(rule, g.nodes[i])) continue;
        const Match m = run_check(rule, ctx, i);
        if (!m.taken()) {
          if (!rule.op.empty() && !m.why.empty())
            p.notes.push_back(backends[bi]->name() + " declines " + g.nodes[i].name + " (" + g.nodes[i].op_type +
                              "): " + m.why);
          continue;
        }
        for (int u : m.nodes)
          if (u >= 0 && u < n) {
            auto &acc = p.accepted_by[u];
            if (std::find(acc.begin(), acc.end(), backends[bi]->name()) == acc.end()) acc.push_back(backends[bi]->name());
          }
      }
    }
  p.regions = form_regions(pr, {}, p.notes);
  number_regions(p, g.nodes.size());
  return p;
}

void reassign_declined(const Graph &g, const ShapeStore &store, const std::vector<const Backend *> &backends,
                       const PartitionOptions &opts, size_t at, const Declined &declined, Partition &p) {
  DISCO_CHECK(at < p.regions.size(), "internal: no region ", at, " to hand back");
  const Region region = p.regions[at];
  int bi = 0;
  while (bi < static_cast<int>(backends.size()) && backends[bi]->name() != region.backend) ++bi;
  DISCO_CHECK(bi < static_cast<int>(backends.size()), "internal: region ", region.id, "'s backend '", region.backend,
              "' is not in the list");
  const MatchContext ctx(g, store);
  const DataGraph dg(g);
  const auto rules = rules_of(backends);
  Problem pr{g, store, ctx, dg, backends, rules, opts, std::vector<bool>(g.nodes.size())};
  for (int x : region.nodes) pr.scope[x] = true;
  // Backends before this one did not take these nodes; the declined ones go past it too.
  Bans banned;
  for (int x : region.nodes)
    for (int b = 0; b < bi; ++b) banned.insert({x, b});
  std::string names;
  for (int x : declined.nodes) {
    DISCO_CHECK(x >= 0 && x < static_cast<int>(g.nodes.size()) && pr.scope[x], "internal: ", region.backend,
                " declines node ", x, ", which is not in its region ", region.id);
    banned.insert({x, bi});
    names += (names.empty() ? "" : ", ") + g.nodes[x].name;
  }
  p.notes.push_back(region.backend + " hands back {" + names + "} of region " + std::to_string(region.id) + ": " +
                    declined.why);
  std::vector<Region> formed = form_regions(pr, banned, p.notes);
  p.regions.erase(p.regions.begin() + static_cast<std::ptrdiff_t>(at));
  p.regions.insert(p.regions.begin() + static_cast<std::ptrdiff_t>(at), formed.begin(), formed.end());
  number_regions(p, g.nodes.size());
}

void compile_partition(Partition &p, const std::vector<const Backend *> &backends, const PartitionOptions &opts,
                       PlanBuilder &builder) {
  for (size_t i = 0; i < p.regions.size();) {
    const Region &r = p.regions[i];
    builder.progress("region " + std::to_string(r.id + 1) + "/" + std::to_string(p.regions.size()) + " [" +
                     r.backend + "] " + std::to_string(r.nodes.size()) + " node(s)");
    const Backend *backend = nullptr;
    for (const Backend *b : backends)
      if (b->name() == r.backend) backend = b;
    DISCO_CHECK(backend, "internal: region ", r.id, "'s backend '", r.backend, "' is not in the list");
    const Declined declined = backend->compile(r, builder);
    if (declined.nodes.empty()) {
      ++i;
      continue;
    }
    builder.progress(r.backend + " hands back " + std::to_string(declined.nodes.size()) + " node(s) of region " +
                     std::to_string(r.id + 1) + ": " + declined.why);
    reassign_declined(builder.graph(), builder.store(), backends, opts, i, declined, p);
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
