#include "lowering/ops/run_time_loop.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "frontend/checked_size.h"
#include "frontend/errors.h"
#include "lowering/control_flow.h"
#include "lowering/graph_rewrites.h"
#include "lowering/infer_context.h"
#include "lowering/known_values.h"
#include "lowering/op_registry.h"
#include "lowering/weight_layout.h"

namespace disco {
namespace {

constexpr const char *kCarriedSymbol = "loop_c";  // body symbols of carried value k dim j: loop_c<k>_d<j>
constexpr const char *kOuterSymbol = "loop_o";    // and of outer value k: loop_o<k>_d<j>

const Graph &body_of(const Node &n) {
  auto it = n.attrs.find("body");
  DISCO_CHECK(it != n.attrs.end() && it->second.kind == Attribute::GraphAttr && it->second.g, n.where(),
              ": missing graph attribute 'body'");
  return *it->second.g;
}

std::string symbol(const char *kind, size_t k, size_t j) {
  return std::string(kind) + std::to_string(k) + "_d" + std::to_string(j);
}

// `s` with each dim that is not a constant under `store` a body symbol of its own.
Shape body_shape(const Shape &s, const ShapeStore &store, const char *kind, size_t k) {
  Shape out;
  for (size_t j = 0; j < s.size(); ++j) {
    const Dim c = store.canonical(s[j]);
    out.push_back(c.is_const() ? c : Dim::symbol(symbol(kind, k, j)));
  }
  return out;
}

// Inference of a body, its errors as the loop's: a body's ValueRequired names
// the body's values, which no session can compile in.
void infer_body(Graph &b, ShapeStore &store, const Node &n) {
  try {
    infer_shapes(b, store);
  } catch (const Error &e) {
    fail(n.where(), ": its body, which runs at run time (the trip count or condition is not known at compile "
                    "time): ",
         e.what());
  }
}

void set_scalar_input(Graph &b, size_t i, DType t, const Node &n, const char *what) {
  Value &v = b.value(b.inputs.at(i));
  DISCO_CHECK(v.dtype == DType::Undefined || v.dtype == t, n.where(), ": the body's ", what, " input '", v.name,
              "' is ", dtype_name(v.dtype), ", not ", dtype_name(t));
  v.dtype = t;
  bool one = v.shape.has_value();
  if (v.shape)
    for (const Dim &d : *v.shape) one = one && d.is_const(1);
  if (!one) v.shape = Shape{};
}

// A value an op of the body needs at compile time (Resize's sizes, Slice's
// starts) that the body computes from its inputs, so from each iteration's
// data: no session can compile it in. A disco::RunTimeDims after its producer
// (lowering/ops/run_time_dims.h) binds its elements to fresh symbols at run
// time instead, as it does for shape values computed through floats, and the
// ops downstream take them as symbolic dims. False when `id` is not a small
// integer tensor of constant shape that a node of `b` computes.
bool bind_at_run_time(Graph &b, int id, const Graph &trial, const ShapeStore &store) {
  if (id < 0 || static_cast<size_t>(id) >= b.values.size() || static_cast<size_t>(id) >= trial.values.size())
    return false;  // a value of an inlined branch: not in the body as written
  const Value &t = trial.value(id);
  if (t.dtype == DType::Bool || dtype_is_float(t.dtype) || t.dtype == DType::Undefined || !t.shape) return false;
  const std::optional<std::vector<int64_t>> dims = constant_dims(*t.shape, store);
  if (!dims) return false;
  const std::optional<int64_t> count = element_count(*dims);  // none past 2^63: not small either
  if (!count || *count < 1 || *count > 64) return false;
  const int64_t elements = *count;
  size_t producer = b.nodes.size();
  for (size_t i = 0; i < b.nodes.size(); ++i)
    for (int o : b.nodes[i].outputs)
      if (o == id) producer = i;
  if (producer == b.nodes.size()) return false;
  if (b.nodes[producer].domain == "disco" && b.nodes[producer].op_type == "RunTimeDims") return false;
  const std::string name = b.value(id).name;
  const int computed = b.add_value(name + "/computed", t.dtype);
  Node bind;
  bind.name = b.nodes[producer].name + "/run_time_dims";
  bind.domain = "disco";
  bind.op_type = "RunTimeDims";
  bind.opset = 1;
  bind.inputs = {computed};
  bind.outputs = {id};
  for (int64_t i = 0; i < elements; ++i) bind.outputs.push_back(b.add_value(name + "/extent" + std::to_string(i), DType::U8));
  for (int &o : b.nodes[producer].outputs)
    if (o == id) o = computed;
  b.nodes.insert(b.nodes.begin() + static_cast<long>(producer) + 1, std::move(bind));
  for (size_t i = 0; i < b.nodes.size(); ++i)
    for (int o : b.nodes[i].outputs)
      if (o >= 0) b.value(o).producer = static_cast<int>(i);
  return true;
}

// Settles the body's graph: values its ops need at compile time bound at run
// time (bind_at_run_time), and carried dims that are constants but change
// from one iteration to the next (torchvision's paste_masks grows a [0, h, w]
// tensor by one mask a trip) made body symbols, until the body infers and
// keeps every constant carried dim.
void settle_body(Graph &pb, const Node &n, size_t carried) {
  for (int round = 0; round < 256; ++round) {
    Graph trial = pb;
    ShapeStore store;
    try {
      infer_shapes(trial, store);
    } catch (const ValueRequired &e) {
      if (bind_at_run_time(pb, e.value_id, trial, store)) continue;
      infer_body(trial, store, n);  // fails, naming the loop
    }
    bool changed = false;
    for (size_t k = 0; k < carried; ++k) {
      Value &in = pb.value(pb.inputs[2 + k]);
      const Value &out = trial.value(trial.outputs.at(1 + k));
      DISCO_CHECK(out.dtype == in.dtype && out.shape && out.shape->size() == in.shape->size(), n.where(),
                  ": carried value ", k, " goes in as ", dtype_name(in.dtype), " ", shape_str(*in.shape),
                  " and comes out of the body as ", dtype_name(out.dtype), " ",
                  out.shape ? shape_str(*out.shape) : "(no shape)", "; its dtype and rank must stay");
      for (size_t j = 0; j < in.shape->size(); ++j) {
        Dim &d = (*in.shape)[j];
        if (d.is_const() && store.canonical((*out.shape)[j]) != d) {
          d = Dim::symbol(symbol(kCarriedSymbol, k, j));
          changed = true;
        }
      }
    }
    if (!changed) return;
  }
  fail(n.where(), ": its body's shapes do not settle");
}

void infer_run_time_loop(InferContext &c) {
  const Node &n = c.node();
  const Graph &pb = body_of(n);
  const size_t carried = static_cast<size_t>(c.attrs().get_int("carried"));
  const size_t ins = n.inputs.size(), outs = n.outputs.size();
  DISCO_CHECK(ins >= 2 + carried && outs >= carried && pb.inputs.size() == ins &&
                  pb.outputs.size() == 1 + outs,
              n.where(), ": the run-time loop's inputs, outputs and body do not match");
  for (int i : {0, 1}) {
    if (!c.has_input(i)) continue;
    const char *what = i == 0 ? "the trip count" : "the condition";
    if (dtype_is_float(c.dtype(i))) c.fail(what, " (input ", i, ") must be an integer or bool tensor");
    for (const Dim &d : c.shape(i))
      if (!c.store().canonical(d).is_const(1))
        c.fail(what, " (input ", i, ") must hold one element, its shape is ", shape_str(c.shape(i)));
  }
  Graph b = pb;
  ShapeStore bs;
  infer_body(b, bs, n);
  // Body symbols that hold for every iteration, as the enclosing graph's dims.
  std::map<std::string, Dim> to_outer;
  for (size_t k = 2 + carried; k < ins; ++k) {
    const Shape &declared = *pb.value(pb.inputs[k]).shape;
    for (size_t j = 0; j < declared.size(); ++j) {
      const Dim d = bs.canonical(declared[j]);
      if (d.is_symbol()) to_outer.emplace(d.symbol_name(), c.store().canonical(c.shape(static_cast<int>(k))[j]));
    }
  }
  for (size_t k = 0; k < carried; ++k) {
    const Shape &declared = *pb.value(pb.inputs[2 + k]).shape;
    const Shape out = bs.canonical(*b.value(b.outputs[1 + k]).shape);
    for (size_t j = 0; j < declared.size() && j < out.size(); ++j) {
      const Dim d = bs.canonical(declared[j]);
      if (d.is_symbol() && out[j] == d)
        to_outer.emplace(d.symbol_name(), c.store().canonical(c.shape(static_cast<int>(2 + k))[j]));
    }
  }
  auto outer_dim = [&](const Dim &body_dim, const std::string &what) {
    const Dim d = bs.canonical(body_dim);
    std::set<std::string> syms;
    d.collect_symbols(syms);
    bool invariant = true;
    for (const auto &s : syms) invariant = invariant && to_outer.count(s);
    if (invariant)
      return c.store().canonical(d.substitute([&](const std::string &s) -> std::optional<Dim> { return to_outer.at(s); }));
    return c.store().fresh_symbol(n.name + "_" + what, c.where() + " " + what + " (bound when the loop has run)");
  };
  for (size_t k = 0; k < carried; ++k) {
    const Value &v = b.value(b.outputs[1 + k]);
    Shape s;
    for (size_t j = 0; j < v.shape->size(); ++j)
      s.push_back(outer_dim((*v.shape)[j], "carried" + std::to_string(k) + "_d" + std::to_string(j)));
    if (c.has_output(static_cast<int>(k))) c.set_output(static_cast<int>(k), v.dtype, s);
  }
  const Dim trips = c.store().fresh_symbol(n.name + "_trips", c.where() + " trip count (known when the loop has run)");
  for (size_t k = carried; k < outs; ++k) {
    const Value &v = b.value(b.outputs[1 + k]);
    DISCO_CHECK(v.shape, n.where(), ": the body's scan output ", k - carried, " has no shape");
    Shape s = {trips};
    for (size_t j = 0; j < v.shape->size(); ++j)
      s.push_back(outer_dim((*v.shape)[j], "scan" + std::to_string(k - carried) + "_d" + std::to_string(j + 1)));
    if (c.has_output(static_cast<int>(k))) c.set_output(static_cast<int>(k), v.dtype, s);
  }
}

// The names `b` reads: its nodes' inputs, its outputs, and what nested graphs read.
std::set<std::string> names_read(const Graph &b) {
  std::set<std::string> out;
  for (const Node &nd : b.nodes) {
    for (int i : nd.inputs)
      if (i >= 0) out.insert(b.value(i).name);
    for (const auto &[k, a] : nd.attrs)
      if (a.kind == Attribute::GraphAttr && a.g) free_names(*a.g, out);
  }
  for (int o : b.outputs) out.insert(b.value(o).name);
  return out;
}

int fresh_value(Graph &g, const std::string &base, DType t) {
  std::string name = base;
  for (int k = 1; g.find_value(name) >= 0; ++k) name = base + "#" + std::to_string(k);
  return g.add_value(name, t);
}

Node plain_node(const std::string &name, const std::string &op, std::vector<int> inputs, int output) {
  Node nd;
  nd.name = name;
  nd.op_type = op;
  nd.opset = 13;  // inputs, not attributes, for Slice's bounds, whatever the model's opset
  nd.inputs = std::move(inputs);
  nd.outputs = {output};
  return nd;
}

// A carried value that starts empty along axis 0 and that the body only
// appends to, acc' = Concat(acc, part, axis 0), as torchvision's
// paste_masks_in_image collects one [1, h, w] mask a trip into a [0, h, w]
// start. A Concat kernel cannot read an input whose symbolic extent is 0 at
// run time, and the copies would grow with the square of the trip count, so
// the part becomes a scan output instead, [trips, e, ...], and after the loop
// acc = Concat(start, Reshape(parts, [trips * e, ...])). Rewrites `n` and its
// body `b` in place; the nodes after the loop go to `after`.
void appends_to_scans(Graph &g, Node &n, Graph &b, const ShapeStore &store, std::vector<Node> &after) {
  for (size_t k = n.inputs.size() - 2; k-- > 0;) {
    if (b.inputs.size() != n.inputs.size() || b.outputs.size() < n.inputs.size() - 1) return;
    const int start = n.inputs[2 + k], in = b.inputs[2 + k], out = b.outputs[1 + k];
    if (start < 0) continue;
    const Value &sv = g.value(start);
    if (!sv.shape || sv.shape->empty() || !store.canonical((*sv.shape)[0]).is_const(0)) continue;
    Node *cat = nullptr;
    int uses = 0;
    for (Node &nd : b.nodes) {
      for (int o : nd.outputs)
        if (o == out) cat = &nd;
      for (int i : nd.inputs) uses += i == in;
    }
    if (!cat || cat->op_type != "Concat" || !cat->domain.empty() || cat->inputs.size() < 2 || cat->inputs[0] != in ||
        uses != 1)
      continue;
    auto axis = cat->attrs.find("axis");
    const int64_t rank = static_cast<int64_t>(sv.shape->size());
    if (axis == cat->attrs.end() || (axis->second.i != 0 && axis->second.i != -rank)) continue;
    if (std::count(b.outputs.begin(), b.outputs.end(), out) != 1 ||
        std::count(b.outputs.begin(), b.outputs.end(), in) != 0)
      continue;
    std::set<std::string> nested;
    for (const Node &nd : b.nodes)
      for (const auto &[name, a] : nd.attrs)
        if (a.kind == Attribute::GraphAttr && a.g) free_names(*a.g, nested);
    if (nested.count(b.value(in).name)) continue;
    // The body: the Concat without the carried value gives the part, a scan output.
    cat->inputs.erase(cat->inputs.begin());
    b.inputs.erase(b.inputs.begin() + 2 + static_cast<long>(k));
    b.outputs.erase(b.outputs.begin() + 1 + static_cast<long>(k));
    b.outputs.push_back(out);
    const int final_value = n.outputs[k];
    n.inputs.erase(n.inputs.begin() + 2 + static_cast<long>(k));
    n.outputs.erase(n.outputs.begin() + static_cast<long>(k));
    const std::string p = n.name + "/appended" + std::to_string(k);
    const int parts = fresh_value(g, p + "/parts", sv.dtype);
    n.outputs.push_back(parts);
    if (final_value < 0) continue;
    auto constant = [&](const std::string &what, int64_t v) {
      return g.add_constant(g.value(fresh_value(g, p + "/" + what, DType::I64)).name + "/c",
                            TensorData::from_int64({v}, {1}));
    };
    auto value = [&](const std::string &what) { return fresh_value(g, p + "/" + what, DType::Undefined); };
    const int shape = value("shape"), trips = value("trips"), e = value("e"), rest = value("rest");
    const int merged = value("merged"), flat_shape = value("flat_shape"), flat = value("flat");
    const int zero = constant("zero", 0), one = constant("one", 1), two = constant("two", 2);
    const int end = constant("end", INT64_MAX);
    after.push_back(plain_node(p + "/Shape", "Shape", {parts}, shape));
    after.push_back(plain_node(p + "/trips", "Slice", {shape, zero, one}, trips));
    after.push_back(plain_node(p + "/e", "Slice", {shape, one, two}, e));
    after.push_back(plain_node(p + "/rest", "Slice", {shape, two, end}, rest));
    after.push_back(plain_node(p + "/merged", "Mul", {trips, e}, merged));
    Attribute zero_axis;
    zero_axis.kind = Attribute::Int;
    zero_axis.i = 0;
    after.push_back(plain_node(p + "/flat_shape", "Concat", {merged, rest}, flat_shape));
    after.back().attrs["axis"] = zero_axis;
    after.push_back(plain_node(p + "/Reshape", "Reshape", {parts, flat_shape}, flat));
    after.push_back(plain_node(p + "/Concat", "Concat", {start, flat}, final_value));
    after.back().attrs["axis"] = zero_axis;
  }
}

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

std::vector<Node> loop_at_run_time(Graph &g, const Node &loop, const ShapeStore &store) {
  Node n = loop;
  Graph b = body_of(loop);
  std::vector<Node> after;
  DISCO_CHECK(n.inputs.size() >= 2 && n.outputs.size() + 2 >= n.inputs.size(), n.where(),
              ": a Loop takes a trip count, a condition and carried values, and gives one output per carried value");
  appends_to_scans(g, n, b, store, after);
  const size_t carried = n.inputs.size() - 2, scans = n.outputs.size() - carried;
  DISCO_CHECK(b.inputs.size() == 2 + carried, n.where(), ": the body takes ", b.inputs.size(),
              " inputs; the iteration, the condition and ", carried, " carried values make ", 2 + carried);
  DISCO_CHECK(b.outputs.size() == 1 + carried + scans, n.where(), ": the body gives ", b.outputs.size(),
              " outputs; the condition, ", carried, " carried values and ", scans, " scan outputs make ",
              1 + carried + scans);
  auto pb = std::make_shared<Graph>(b);
  pb->name = n.name + "/body";
  set_scalar_input(*pb, 0, DType::I64, n, "iteration");
  set_scalar_input(*pb, 1, DType::Bool, n, "condition");
  for (size_t k = 0; k < carried; ++k) {
    DISCO_CHECK(n.inputs[2 + k] >= 0, n.where(), ": carried value ", k, " (input ", 2 + k, ") is missing");
    const Value &o = g.value(n.inputs[2 + k]);
    DISCO_CHECK(o.shape, n.where(), ": carried value ", k, " ('", o.name, "') has no shape");
    Value &v = pb->value(pb->inputs[2 + k]);
    v.dtype = o.dtype;
    v.shape = body_shape(*o.shape, store, kCarriedSymbol, k);
  }
  // The values the body reads from enclosing graphs: constants and values
  // known at compile time stay constants; the others become body inputs.
  std::set<std::string> names;
  free_names(b, names);
  const std::set<std::string> read = names_read(b);
  std::vector<int> outer;
  for (const auto &name : names) {
    if (!read.count(name)) continue;  // a value nothing reads (an input appends_to_scans took away)
    const int id = g.find_value(name);
    DISCO_CHECK(id >= 0, n.where(), ": the body uses '", name, "', which no enclosing graph defines");
    const Value &o = g.value(id);
    int bid = pb->find_value(name);
    if (bid < 0) bid = pb->add_value(name, o.dtype);
    Value &v = pb->value(bid);
    v.dtype = o.dtype;
    v.producer = -1;
    if (o.constant) {
      v.constant = o.constant;
      v.shape = o.shape;
      continue;
    }
    DISCO_CHECK(o.shape, n.where(), ": the body reads '", name, "', which has no shape");
    const Shape s = store.canonical(*o.shape);
    bool const_shape = true;
    for (const Dim &d : s) const_shape = const_shape && d.is_const();
    if (const_shape && o.dtype != DType::Bool && !dtype_is_float(o.dtype))
      if (auto ints = ints_value(o, store)) {
        std::vector<int64_t> dims;
        for (const Dim &d : s) dims.push_back(d.as_const());
        v.constant = TensorData::from_ints(o.dtype, *ints, dims);
        v.shape = s;
        continue;
      }
    v.shape = body_shape(s, store, kOuterSymbol, outer.size());
    pb->inputs.push_back(bid);
    outer.push_back(id);
  }
  settle_body(*pb, n, carried);
  Node out;
  out.name = n.name;
  out.op_type = "Loop";
  out.domain = "disco";
  out.opset = 1;
  out.inputs = n.inputs;
  out.inputs.insert(out.inputs.end(), outer.begin(), outer.end());
  out.outputs = n.outputs;
  Attribute body, count;
  body.kind = Attribute::GraphAttr;
  body.g = pb;
  count.kind = Attribute::Int;
  count.i = static_cast<int64_t>(carried);
  out.attrs = {{"body", body}, {"carried", count}};
  after.insert(after.begin(), std::move(out));
  return after;
}

void register_run_time_loop(OpRegistry &r) {
  r.add(OpDef("disco", "Loop", 1, kAnyLaterOpset, OpKind::Host, infer_run_time_loop, nullptr));
}

void compile_loop_bodies(Graph &g, const std::string &name, const std::string &bodies_dir, bool aot,
                         const BuildBodyFn &build) {
  for (Node &n : g.nodes) {
    if (n.domain != "disco" || n.op_type != "Loop") continue;
    DISCO_CHECK(!aot, n.where(), ": its trip count or condition is known only at run time, so its body runs from the "
                                 "executor, once per iteration; AOT libraries cannot hold such a loop");
    int k = 0;
    auto prefix = [&] { return "loop" + std::to_string(k); };
    while (exists(bodies_dir + "/" + prefix() + ".plan.txt") || exists(bodies_dir + "/" + prefix() + ".d")) ++k;
    const std::string sub = bodies_dir + "/" + prefix() + ".d";
    std::filesystem::create_directory(sub);
    Graph body = body_of(n);
    ShapeStore store;
    infer_body(body, store, n);
    rewrite_graph(body);
    transpose_constant_weights(body);
    Plan p = build(body, store, name + "_" + prefix(), sub);
    // Beside the enclosing plan, so that the cache entry's manifest covers them.
    for (std::string *file : {&p.library, &p.constants}) {
      if (file->empty()) continue;
      const std::string to = prefix() + "." + *file;
      DISCO_CHECK(std::rename((sub + "/" + *file).c_str(), (bodies_dir + "/" + to).c_str()) == 0, n.where(),
                  ": cannot move the body's '", *file, "' into '", bodies_dir, "'");
      *file = to;
    }
    p.save(bodies_dir + "/" + prefix() + ".plan.txt");
    std::filesystem::remove_all(sub);
    Attribute index;
    index.kind = Attribute::Int;
    index.i = k;
    n.attrs["body_plan"] = index;
  }
}

}  // namespace disco
