#include "lowering/control_flow.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "frontend/checked_size.h"
#include "frontend/errors.h"
#include "lowering/infer_context.h"
#include "lowering/known_values.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/run_time_loop.h"

namespace disco {

namespace {

bool produced_in(const Graph &sub, int sid) {
  for (const auto &n : sub.nodes)
    for (int o : n.outputs)
      if (o == sid) return true;
  return false;
}

// The names `g` defines itself: its inputs, constants and node outputs.
std::set<std::string> defined_names(const Graph &g) {
  std::set<std::string> out;
  for (int id : g.inputs) out.insert(g.value(id).name);
  for (const auto &v : g.values)
    if (v.constant) out.insert(v.name);
  for (const auto &n : g.nodes)
    for (int o : n.outputs)
      if (o >= 0) out.insert(g.value(o).name);
  return out;
}

}  // namespace

void free_names(const Graph &g, std::set<std::string> &out) {
  const std::set<std::string> own = defined_names(g);
  for (const auto &v : g.values)
    if (!own.count(v.name)) out.insert(v.name);
  for (const auto &n : g.nodes)
    for (const auto &[k, a] : n.attrs)
      if (a.kind == Attribute::GraphAttr && a.g) {
        std::set<std::string> inner;
        free_names(*a.g, inner);
        for (const auto &name : inner)
          if (!own.count(name)) out.insert(name);
      }
}

namespace {

// Renames the values that `g` and its nested graphs read from enclosing
// scopes (`renames`: old name -> new name). Nested graphs are copied, so the
// node that `g` came from keeps its own. A name `g` defines hides the outer one.
void rename_free_names(Graph &g, const std::map<std::string, std::string> &renames, const std::string &where) {
  const std::set<std::string> own = defined_names(g);
  for (auto &v : g.values) {
    if (own.count(v.name)) continue;
    auto it = renames.find(v.name);
    if (it == renames.end()) continue;
    DISCO_CHECK(!own.count(it->second), where, ": the body reads '", v.name, "' from an enclosing graph, whose copy '",
                it->second, "' a nested body defines itself");
    v.name = it->second;
  }
  std::map<std::string, std::string> inner = renames;
  for (const auto &name : own) inner.erase(name);
  if (inner.empty()) return;
  for (auto &n : g.nodes)
    for (auto &[k, a] : n.attrs)
      if (a.kind == Attribute::GraphAttr && a.g) {
        a.g = std::make_shared<Graph>(*a.g);
        rename_free_names(*a.g, inner, where);
      }
}

// Builds the replacement nodes of one control-flow node, with fresh value names.
class Splicer {
 public:
  Splicer(Graph &g, const Node &node) : g_(g), node_(node), opset_(node.opset) {}

  // Copies `sub`'s nodes; `bind` maps the subgraph's inputs to outer values.
  // Returns the outer ids of the subgraph's outputs.
  std::vector<int> inline_graph(const Graph &sub, const std::vector<int> &bind, const std::string &prefix) {
    DISCO_CHECK(bind.size() == sub.inputs.size(), node_.where(), ": the body takes ", sub.inputs.size(),
                " inputs, ", bind.size(), " are given");
    std::map<int, int> map;  // subgraph value id -> outer value id
    for (size_t i = 0; i < sub.inputs.size(); ++i) map[sub.inputs[i]] = bind[i];
    auto outer = [&](int sid) {
      auto it = map.find(sid);
      if (it != map.end()) return it->second;
      const Value &sv = sub.value(sid);
      int id;
      if (sv.constant) {
        id = g_.add_value(fresh(prefix, sv.name), sv.dtype);
        g_.value(id).constant = sv.constant;
        g_.value(id).shape = sv.shape;
      } else if (sv.producer >= 0 || produced_in(sub, sid)) {
        id = g_.add_value(fresh(prefix, sv.name), sv.dtype);
      } else {
        id = g_.find_value(sv.name);  // a name from an enclosing scope
        DISCO_CHECK(id >= 0, node_.where(), ": the body uses '", sv.name, "', which no enclosing graph defines");
      }
      map[sid] = id;
      return id;
    };
    for (const Node &sn : sub.nodes) {
      Node n = sn;
      n.name = prefix + sn.name;
      for (auto &in : n.inputs)
        if (in >= 0) in = outer(in);
      for (auto &out : n.outputs)
        if (out >= 0) out = outer(out);
      // A nested body (an If, Loop or Scan inside this one) may read this
      // body's values, which get new names here: its copy reads those.
      for (auto &[k, a] : n.attrs) {
        if (a.kind != Attribute::GraphAttr || !a.g) continue;
        std::set<std::string> names;
        free_names(*a.g, names);
        std::map<std::string, std::string> renames;
        for (const auto &name : names)
          if (int sid = sub.find_value(name); sid >= 0) renames[name] = g_.value(outer(sid)).name;
        if (renames.empty()) continue;
        a.g = std::make_shared<Graph>(*a.g);
        rename_free_names(*a.g, renames, n.where());
      }
      out_.push_back(std::move(n));
    }
    std::vector<int> outs;
    for (int o : sub.outputs) outs.push_back(outer(o));
    return outs;
  }

  int constant(const std::string &name, TensorData t) {
    return g_.add_constant(fresh(node_.name + "/", name), std::move(t));
  }

  int add(const std::string &op, std::vector<int> inputs, Attributes attrs, int output = -1,
          const std::string &domain = "") {
    Node n;
    n.op_type = op;
    n.domain = domain;
    n.name = node_.name + "/" + op + std::to_string(out_.size());
    n.opset = opset_;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    if (output < 0) output = g_.add_value(fresh(n.name, "_out"));
    n.outputs = {output};
    out_.push_back(std::move(n));
    return output;
  }

  int identity(int from, int to) { return add("Identity", {from}, {}, to); }

  // x with a new axis of extent 1 at `axis`.
  int unsqueeze(int x, int64_t axis) {
    if (opset_ >= 13) return add("Unsqueeze", {x, constant("axes", TensorData::from_int64({axis}, {1}))}, {});
    Attribute a;
    a.kind = Attribute::Ints;
    a.ints = {axis};
    return add("Unsqueeze", {x}, {{"axes", a}});
  }

  // x[..., index, ...] along `axis`, the axis removed.
  int take(int x, int64_t axis, int64_t index) {
    Attribute a;
    a.kind = Attribute::Int;
    a.i = axis;
    return add("Gather", {x, constant("index", TensorData::from_int64({index}, {}))}, {{"axis", a}});
  }

  int concat(const std::vector<int> &xs, int64_t axis, int output) {
    Attribute a;
    a.kind = Attribute::Int;
    a.i = axis;
    return add("Concat", xs, {{"axis", a}}, output);
  }

  std::vector<Node> take_nodes() { return std::move(out_); }

 private:
  std::string fresh(const std::string &prefix, const std::string &name) {
    std::string base = prefix + name, n = base;
    for (int k = 1; g_.find_value(n) >= 0; ++k) n = base + "#" + std::to_string(k);
    return n;
  }

  Graph &g_;
  const Node &node_;
  int opset_;
  std::vector<Node> out_;
};

const Graph &body(const Node &n, const std::string &attr) {
  auto it = n.attrs.find(attr);
  DISCO_CHECK(it != n.attrs.end() && it->second.kind == Attribute::GraphAttr && it->second.g, n.where(),
              ": missing graph attribute '", attr, "'");
  return *it->second.g;
}

bool known_bool(const Graph &g, const Node &n, int input, const ShapeStore &store, const std::string &what) {
  // Found by fuzz/fuzz_onnx_import: an If without inputs threw std::out_of_range from at().
  DISCO_CHECK(static_cast<size_t>(input) < n.inputs.size() && n.inputs[static_cast<size_t>(input)] >= 0, n.where(),
              ": ", what, " (input ", input, ") is missing");
  auto v = ints_value(g.value(n.inputs.at(input)), store);
  if (!v) value_required(g, n, input, what);
  DISCO_CHECK(v->size() == 1, n.where(), ": ", what, " must hold one element");
  return v->at(0) != 0;
}

// Whether compiling the condition's graph inputs in pays, should the
// branches give outputs of different shapes: the inputs must take few values
// (flags and small integer tensors; a Session compiles once per value), and
// the condition must fold from them, so not pass through an op run on the
// host (NonZero, NonMaxSuppression, TopKDynamic: never folded). torchvision's
// batched_nms tests `boxes.numel() == 0` on the boxes left by a score
// threshold (a NonZero on scores computed from the float image): compiling
// the image in would compile once per image, and still not decide it.
bool condition_compiles_in(const Graph &g, int cond, const std::vector<int> &from, const ShapeStore &store) {
  if (from.empty()) return false;
  for (int id : from) {
    const Value &v = g.value(id);
    if (dtype_is_float(v.dtype) || !v.shape) return false;
    const std::optional<std::vector<int64_t>> dims = constant_dims(*v.shape, store);
    if (!dims) return false;
    // A count past 2^63 (an input of [2^32, 2^32]; fuzz/regressions/onnx-if-
    // condition-of-2-to-64-elements.onnx overflowed here) is many values too.
    const std::optional<int64_t> elements = element_count(*dims);
    if (!elements || *elements > 64) return false;
  }
  const OpRegistry &reg = OpRegistry::global();
  std::set<int> seen;
  std::vector<int> todo = {cond};
  while (!todo.empty()) {
    const int v = todo.back();
    todo.pop_back();
    if (v < 0 || !seen.insert(v).second) continue;
    const Value &val = g.value(v);
    if (val.constant || val.producer < 0) continue;
    const Node &p = g.nodes.at(static_cast<size_t>(val.producer));
    const OpDef *def = reg.find(p.domain, p.op_type, p.opset);
    if (def && def->kind == OpKind::Host) return false;
    todo.insert(todo.end(), p.inputs.begin(), p.inputs.end());
  }
  return true;
}

// Both branches, and per output an IfSelect (domain "disco") that picks one
// by the condition at run time: one compile serves both values. Its shape
// rule requires the branches' shapes to agree (infer_if_select); where they
// differ and compiling the condition in does not pay ("bind_at_run_time"),
// inference routes it to IfSelectDynamic (route_if_select_of_differing_shapes).
std::vector<Node> expand_if_at_run_time(Graph &g, const Node &n, const ValueRequired &why, const ShapeStore &store) {
  Attribute bind_at_run_time;
  bind_at_run_time.kind = Attribute::Int;
  bind_at_run_time.i = condition_compiles_in(g, n.inputs[0], why.from_inputs, store) ? 0 : 1;
  Splicer s(g, n);
  auto then_outs = s.inline_graph(body(n, "then_branch"), {}, n.name + "/then/");
  auto else_outs = s.inline_graph(body(n, "else_branch"), {}, n.name + "/else/");
  DISCO_CHECK(then_outs.size() == n.outputs.size() && else_outs.size() == n.outputs.size(), n.where(),
              ": the branches have ", then_outs.size(), " and ", else_outs.size(), " outputs, the node ",
              n.outputs.size());
  Attribute from, msg, node_name, index;
  from.kind = Attribute::Ints;
  from.ints.assign(why.from_inputs.begin(), why.from_inputs.end());
  msg.kind = node_name.kind = Attribute::String;
  msg.s = why.what();
  node_name.s = n.name;
  index.kind = Attribute::Int;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] < 0) continue;
    index.i = static_cast<int64_t>(i);
    s.add("IfSelect", {n.inputs[0], then_outs[i], else_outs[i]},
          {{"cond_inputs", from},
           {"cond_message", msg},
           {"if_node", node_name},
           {"output", index},
           {"bind_at_run_time", bind_at_run_time}},
          n.outputs[i], "disco");
  }
  return s.take_nodes();
}

std::vector<Node> expand_if(Graph &g, const Node &n, const ShapeStore &store) {
  bool cond;
  try {
    cond = known_bool(g, n, 0, store, "the condition");
  } catch (const ValueRequired &e) {
    return expand_if_at_run_time(g, n, e, store);
  }
  Splicer s(g, n);
  auto outs = s.inline_graph(body(n, cond ? "then_branch" : "else_branch"), {}, n.name + (cond ? "/then/" : "/else/"));
  DISCO_CHECK(outs.size() == n.outputs.size(), n.where(), ": the branch has ", outs.size(), " outputs, the node ",
              n.outputs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    if (n.outputs[i] >= 0) s.identity(outs[i], n.outputs[i]);
  return s.take_nodes();
}

// out = cond ? then : else, for a one-element condition and two tensors of
// one dtype and shape. Otherwise, when the condition comes from graph inputs,
// ValueRequired makes the Session compile their values in (one compile per
// value, each taking one branch); without such inputs, an error naming the If.
void infer_if_select(InferContext &c) {
  const std::string if_node = c.attrs().get_string("if_node", c.node().name);
  const std::string output = "output " + std::to_string(c.attrs().get_int("output", 0));
  auto cannot_select = [&](const std::string &why) {
    auto from = c.attrs().get_ints("cond_inputs");
    if (!from.empty())
      throw ValueRequired(c.node().inputs[0], std::vector<int>(from.begin(), from.end()),
                          c.attrs().get_string("cond_message", "") + "; " + why);
    fail("node '", if_node, "' (If): ", why,
         ", and the condition is computed from the data at run time, so disco cannot take one branch at compile time");
  };
  for (const Dim &d : c.shape(0))
    if (!c.store().canonical(d).is_const(1))
      cannot_select("the condition's shape " + shape_str(c.shape(0)) + " is not one element");
  if (c.dtype(1) != c.dtype(2))
    cannot_select("the branches give " + output + " the dtypes " + dtype_name(c.dtype(1)) + " and " +
                  dtype_name(c.dtype(2)));
  const Shape a = c.store().canonical(c.shape(1)), b = c.store().canonical(c.shape(2));
  if (a != b) cannot_select("the branches give " + output + " the shapes " + shape_str(a) + " and " + shape_str(b));
  c.set_output(0, c.dtype(1), a);
}

void lower_if_select(LowerContext &c) {
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  auto oi = c.exprs(v);
  const HTensor &cond = c.in(0);
  Halide::Expr k = cond.at(std::vector<Halide::Expr>(static_cast<size_t>(cond.rank()), 0));
  if (!k.type().is_bool()) k = k != Halide::cast(k.type(), 0);
  c.define_output(0, v, Halide::select(k, c.in(1).at(oi), c.in(2).at(oi)));
}

// The IfSelect of branch outputs whose shapes differ, when the condition is
// computed from data (route_if_select_of_differing_shapes): a host op copies
// the taken branch's tensor. Each dim that differs between the branches gets
// a fresh symbol, bound at run time by the copy's shape (as NonZero's count
// is), so the ops after it stay shape-generic and one compile serves both.
void infer_if_select_dynamic(InferContext &c) {
  const std::string if_node = c.attrs().get_string("if_node", c.node().name);
  const std::string output = "output " + std::to_string(c.attrs().get_int("output", 0));
  for (const Dim &d : c.shape(0))
    if (!c.store().canonical(d).is_const(1))
      fail("node '", if_node, "' (If): the condition's shape ", shape_str(c.shape(0)), " is not one element");
  if (c.dtype(1) != c.dtype(2) || c.rank(1) != c.rank(2))
    fail("node '", if_node, "' (If): the branches give ", output, " the dtypes ", dtype_name(c.dtype(1)), " and ",
         dtype_name(c.dtype(2)), " and the ranks ", c.rank(1), " and ", c.rank(2), "; they must agree");
  const Shape a = c.store().canonical(c.shape(1)), b = c.store().canonical(c.shape(2));
  Shape out(a.size());
  for (size_t d = 0; d < a.size(); ++d)
    out[d] = a[d] == b[d] ? a[d]
                          : c.store().fresh_symbol(c.node().name + "_d" + std::to_string(d),
                                                   "node '" + if_node + "' (If) " + output + " dim " +
                                                       std::to_string(d) + " (" + a[d].str() + " or " + b[d].str() +
                                                       ", the branch taken at run time)");
  c.set_output(0, c.dtype(1), out);
}

// The body's condition output is its condition input, through Identity nodes.
bool passes_condition_through(const Graph &b) {
  int v = b.outputs.at(0);
  for (int hops = 0; hops < 64; ++hops) {
    if (v == b.inputs.at(1)) return true;
    const Node *p = nullptr;
    for (const auto &n : b.nodes)
      for (int o : n.outputs)
        if (o == v) p = &n;
    if (!p || p->op_type != "Identity") return false;
    v = p->inputs.at(0);
  }
  return false;
}

// Unrolled when the trip count and condition are known at compile time, the
// body passes its condition through and there are few trips; otherwise a
// disco::Loop that runs the body, compiled once, at run time.
std::vector<Node> expand_loop(Graph &g, const Node &n, const ShapeStore &store) {
  const Graph &b = body(n, "body");
  const bool has_m = n.inputs.size() > 0 && n.inputs[0] >= 0, has_cond = n.inputs.size() > 1 && n.inputs[1] >= 0;
  DISCO_CHECK(n.inputs.size() >= 2, n.where(), ": a Loop takes a trip count and a condition (either may be empty), ",
              n.inputs.size(), " inputs are given");
  const std::optional<std::vector<int64_t>> m = has_m ? ints_value(g.value(n.inputs[0]), store) : std::nullopt;
  // The condition: true without one; unknown (cond_known false) when not a constant.
  bool cond_known = true, cond = true;
  if (has_cond) {
    try {
      cond = known_bool(g, n, 1, store, "the loop condition");
    } catch (const ValueRequired &) {
      cond_known = false;
    }
  }
  const size_t carried = n.inputs.size() - 2;
  DISCO_CHECK(n.outputs.size() >= carried, n.where(), ": ", carried, " carried values but only ", n.outputs.size(),
              " outputs");
  const size_t scans = n.outputs.size() - carried;
  int64_t trips = -1;  // unknown
  if (m && m->size() == 1 && cond_known) trips = cond ? m->at(0) : 0;
  const bool unroll = trips >= 0 && trips <= 4096 && (!has_cond || passes_condition_through(b)) &&
                      (trips > 0 || scans == 0);
  if (!unroll) {
    try {
      return loop_at_run_time(g, n, store);
    } catch (const Error &body_error) {
      // A body that cannot run at run time (it needs a value at compile time
      // that no run-time binding gives) unrolls as before when the trip count
      // comes from graph inputs: the session compiles their values in.
      if (!has_m || m) throw;
      try {
        value_required(g, n, 0, "the trip count");
      } catch (const ValueRequired &e) {
        if (e.from_inputs.empty()) throw body_error;
        throw ValueRequired(e.value_id, e.from_inputs, std::string(e.what()) + " (" + body_error.what() + ")");
      }
      throw;
    }
  }
  Splicer s(g, n);
  std::vector<int> state(n.inputs.begin() + 2, n.inputs.end());
  std::vector<std::vector<int>> scan_parts(scans);
  TensorData true_value(DType::Bool, {});
  true_value.mutable_as<uint8_t>()[0] = 1;
  for (int64_t it = 0; it < trips; ++it) {
    std::vector<int> bind = {s.constant("iter", TensorData::from_int64({it}, {})), s.constant("cond", true_value)};
    bind.insert(bind.end(), state.begin(), state.end());
    auto outs = s.inline_graph(b, bind, n.name + "/it" + std::to_string(it) + "/");
    state.assign(outs.begin() + 1, outs.begin() + 1 + static_cast<long>(carried));
    for (size_t k = 0; k < scans; ++k) scan_parts[k].push_back(s.unsqueeze(outs[1 + carried + k], 0));
  }
  for (size_t k = 0; k < carried; ++k)
    if (n.outputs[k] >= 0) s.identity(state[k], n.outputs[k]);
  for (size_t k = 0; k < scans; ++k)
    if (n.outputs[carried + k] >= 0) s.concat(scan_parts[k], 0, n.outputs[carried + k]);
  return s.take_nodes();
}

std::vector<Node> expand_scan(Graph &g, const Node &n, const ShapeStore &store) {
  const Graph &b = body(n, "body");
  AttrReader a(n.attrs, n.where());
  const int64_t num_scan = a.get_int("num_scan_inputs");
  const bool v8 = n.opset < 9;  // opset 8: a batch axis first, and an optional sequence_lens input
  std::vector<int> ins(n.inputs.begin() + (v8 ? 1 : 0), n.inputs.end());
  DISCO_CHECK(!v8 || n.inputs[0] < 0, n.where(), ": sequence_lens is not supported");
  const int64_t states = static_cast<int64_t>(ins.size()) - num_scan;
  DISCO_CHECK(states >= 0, n.where(), ": num_scan_inputs exceeds the inputs");
  // Found by fuzz/fuzz_onnx_import: with no scan input, ins.at(states) threw std::out_of_range.
  DISCO_CHECK(num_scan >= 1 && ins[static_cast<size_t>(states)] >= 0, n.where(), ": Scan needs a scan input");
  DISCO_CHECK(n.outputs.size() >= static_cast<size_t>(states), n.where(), ": ", states,
              " state inputs but only ", n.outputs.size(), " outputs");
  const size_t scan_outs = n.outputs.size() - static_cast<size_t>(states);
  auto ints_or = [&](const char *name, int64_t count, int64_t dflt) {
    auto v = a.get_ints_opt(name).value_or(std::vector<int64_t>(static_cast<size_t>(count), dflt));
    DISCO_CHECK(static_cast<int64_t>(v.size()) == count, n.where(), ": ", name, " needs ", count, " entries");
    return v;
  };
  auto in_axes = ints_or("scan_input_axes", num_scan, 0), in_dirs = ints_or("scan_input_directions", num_scan, 0);
  auto out_axes = ints_or("scan_output_axes", static_cast<int64_t>(scan_outs), 0);
  auto out_dirs = ints_or("scan_output_directions", static_cast<int64_t>(scan_outs), 0);
  const int64_t offset = v8 ? 1 : 0;  // the sequence axis sits after the batch axis in opset 8
  const Value &first = g.value(ins.at(static_cast<size_t>(states)));
  DISCO_CHECK(first.shape, n.where(), ": scan input has no shape");
  const int64_t rank = static_cast<int64_t>(first.shape->size());
  const int64_t axis = (in_axes[0] < 0 ? in_axes[0] + rank : in_axes[0]) + offset;
  DISCO_CHECK(axis >= offset && axis < rank, n.where(), ": scan_input_axes[0] = ", in_axes[0],
              " is outside the scan input's ", rank - offset, " sequence dims");
  Dim len = store.canonical((*first.shape).at(static_cast<size_t>(axis)));
  DISCO_CHECK(len.is_const(), n.where(), ": the sequence length ", len.str(),
              " is symbolic; Scan is unrolled, so it must be a constant");
  int64_t batches = 1;
  if (v8) {
    Dim bd = store.canonical(first.shape->at(0));
    DISCO_CHECK(bd.is_const(), n.where(), ": the batch size must be a constant");
    batches = bd.as_const();
  }
  // Found by fuzz/fuzz_onnx_import: a body with too few outputs was read past its end.
  DISCO_CHECK(b.outputs.size() >= static_cast<size_t>(states) + scan_outs, n.where(), ": the body has ",
              b.outputs.size(), " outputs; ", states, " states and ", scan_outs, " scan outputs need ",
              static_cast<size_t>(states) + scan_outs);
  Splicer s(g, n);
  std::vector<std::vector<int>> final_states(static_cast<size_t>(states)), outs_per_batch(scan_outs);
  for (int64_t bi = 0; bi < batches; ++bi) {
    std::vector<int> state(ins.begin(), ins.begin() + states);
    if (v8)
      for (auto &st : state) st = s.take(st, 0, bi);
    std::vector<std::vector<int>> parts(scan_outs);
    for (int64_t t = 0; t < len.as_const(); ++t) {
      std::vector<int> bind = state;
      for (int64_t k = 0; k < num_scan; ++k) {
        int x = ins[static_cast<size_t>(states + k)];
        if (v8) x = s.take(x, 0, bi);
        int64_t ax = in_axes[k] < 0 ? in_axes[k] + rank - offset : in_axes[k];
        bind.push_back(s.take(x, ax, in_dirs[k] ? len.as_const() - 1 - t : t));
      }
      auto outs = s.inline_graph(b, bind, n.name + "/b" + std::to_string(bi) + "t" + std::to_string(t) + "/");
      state.assign(outs.begin(), outs.begin() + states);
      for (size_t k = 0; k < scan_outs; ++k) parts[k].push_back(outs[static_cast<size_t>(states) + k]);
    }
    for (int64_t k = 0; k < states; ++k) final_states[k].push_back(v8 ? s.unsqueeze(state[k], 0) : state[k]);
    for (size_t k = 0; k < scan_outs; ++k) {
      if (out_dirs[k]) std::reverse(parts[k].begin(), parts[k].end());
      int64_t ax = out_axes[k];
      DISCO_CHECK(ax >= 0, n.where(), ": negative scan_output_axes are not supported");
      std::vector<int> stacked;
      for (int p : parts[k]) stacked.push_back(s.unsqueeze(p, ax));
      int joined = s.concat(stacked, ax, -1);
      outs_per_batch[k].push_back(v8 ? s.unsqueeze(joined, 0) : joined);
    }
  }
  for (int64_t k = 0; k < states; ++k) {
    int out = n.outputs[static_cast<size_t>(k)];
    if (out < 0) continue;
    if (v8) s.concat(final_states[k], 0, out);
    else s.identity(final_states[k][0], out);
  }
  for (size_t k = 0; k < scan_outs; ++k) {
    int out = n.outputs[static_cast<size_t>(states) + k];
    if (out < 0) continue;
    if (v8) s.concat(outs_per_batch[k], 0, out);
    else s.identity(outs_per_batch[k][0], out);
  }
  return s.take_nodes();
}

}  // namespace

void register_control_flow_ops(OpRegistry &r) {
  r.add(OpDef("disco", "IfSelect", 1, kAnyLaterOpset, OpKind::Elementwise, infer_if_select, lower_if_select));
  r.add(OpDef("disco", "IfSelectDynamic", 1, kAnyLaterOpset, OpKind::Host, infer_if_select_dynamic, nullptr));
  register_run_time_loop(r);
}

bool route_if_select_of_differing_shapes(const Graph &g, Node &node, const ShapeStore &store) {
  if (node.domain != "disco" || node.op_type != "IfSelect" || node.inputs.size() != 3) return false;
  if (!AttrReader(node.attrs, node.where()).get_int("bind_at_run_time", 0)) return false;
  const Value &a = g.value(node.inputs[1]), &b = g.value(node.inputs[2]);
  if (!a.shape || !b.shape || a.dtype != b.dtype || a.shape->size() != b.shape->size()) return false;
  if (store.canonical(*a.shape) == store.canonical(*b.shape)) return false;
  node.op_type = "IfSelectDynamic";
  return true;
}

bool is_control_flow(const Node &n) {
  return n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan");
}

void expand_control_flow(Graph &g, size_t index, const ShapeStore &store) {
  const Node node = g.nodes.at(index);
  std::vector<Node> repl = node.op_type == "If"     ? expand_if(g, node, store)
                           : node.op_type == "Loop" ? expand_loop(g, node, store)
                                                    : expand_scan(g, node, store);
  for (int o : node.outputs)
    if (o >= 0) g.value(o).producer = -1;
  g.nodes.erase(g.nodes.begin() + static_cast<long>(index));
  g.nodes.insert(g.nodes.begin() + static_cast<long>(index), repl.begin(), repl.end());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) g.value(o).producer = static_cast<int>(i);
}

}  // namespace disco
