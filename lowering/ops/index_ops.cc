// View ops that pick, join or split parts of tensors along an axis: Gather,
// Concat, Slice, Split, Pad. Lowerings are index remaps; every read whose
// index Halide cannot bound by itself (data indices, the losing side of a
// select) is clamped into the input, so bounds inference never asks for more
// than the input holds. Slice's symbolic extents lean on the shape store's
// bounds to drop clamps that cannot bite.
#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// Any start/end at least this large means "past the end": no dim the run-time
// binder accepts reaches it, and it keeps INT_MAX/INT64_MAX out of dims.
constexpr int64_t kHuge = int64_t(1) << 31;

bool is_index_dtype(DType t) { return t == DType::I32 || t == DType::I64; }

// ---- Gather -----------------------------------------------------------------

void infer_gather(InferContext &c) {
  const Shape &data = c.shape(0), &ind = c.shape(1);
  if (data.empty()) c.fail("data must have rank >= 1");
  if (!is_index_dtype(c.dtype(1))) c.fail("indices must be int32 or int64, not ", dtype_name(c.dtype(1)));
  int64_t axis = normalize_axis(c, c.attrs().get_int("axis", 0), static_cast<int64_t>(data.size()));
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), ind.begin(), ind.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  c.set_output(0, c.dtype(0), out);

  auto idx = c.ints_value(1);
  if (!idx) return;
  Dim n = c.store().canonical(data[axis]);
  int64_t need = 0;  // the extent that makes every index valid
  for (int64_t i : *idx) {
    if (n.is_const() && (i < -n.as_const() || i >= n.as_const()))
      c.fail("index ", i, " is out of range for axis ", axis, " of extent ", n.as_const());
    need = std::max(need, i < 0 ? -i : i + 1);
  }
  if (!n.is_const() && need > 0)
    c.store().add_check({RuntimeCheck::AtLeast, n, Dim(need),
                         c.where() + ": axis " + std::to_string(axis) + " (" + n.str() + ") must have at least " +
                             std::to_string(need) + " elements for the constant indices"});
  auto vals = c.dims_value(0);
  if (vals && data.size() == 1 && ind.size() <= 1) {
    std::vector<Dim> picked;
    for (int64_t i : *idx) picked.push_back((*vals)[i < 0 ? i + static_cast<int64_t>(vals->size()) : i]);
    fold_dims(c, 0, out, c.dtype(0), picked);
  }
}

void lower_gather(LowerContext &c) {
  const HTensor &data = c.in(0), &ind = c.in(1);
  int64_t axis = normalize_axis(c, c.attrs().get_int("axis", 0), data.rank());
  int q = ind.rank();
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  auto oi = c.exprs(v);
  auto position = [&](const std::vector<Expr> &at) {
    Expr i = Halide::cast(Halide::Int(32), ind.at(at));
    return clamp_index(c, Halide::select(i < 0, i + c.dim(data.shape[axis]), i), data.shape[axis]);
  };
  std::vector<Expr> at(oi.begin() + axis, oi.begin() + axis + q);
  Expr i = position(at);
  if (axis + 1 == data.rank() && q > 0) {
    // Along the innermost axis every output vector is a gather; its positions,
    // wrapped and clamped once into int32 (a stage), are one load per vector
    // instead of 64-bit loads, a narrowing, a select and a clamp in every row.
    Halide::Func pos = c.func("positions");
    auto pv = c.vars(q);
    pos(reversed(pv)) = position(c.exprs(pv));
    c.add_stage(pos, StageKind::Other, q);
    i = pos(reversed(at));
  }
  std::vector<Expr> di(oi.begin(), oi.begin() + axis);
  di.push_back(i);
  di.insert(di.end(), oi.begin() + axis + q, oi.end());
  c.define_output(0, v, data.at(di));
}

// ---- Concat -----------------------------------------------------------------

int64_t concat_axis(const NodeContext &c, int64_t rank) {
  // Opset 1 defaults the axis to 1; it is required since opset 4.
  int64_t axis = c.opset() < 4 ? c.attrs().get_int("axis", 1) : c.attrs().get_int("axis");
  return normalize_axis(c, axis, rank);
}

void infer_concat(InferContext &c) {
  if (c.num_inputs() == 0) c.fail("needs at least one input");
  const Shape &first = c.shape(0);
  if (first.empty()) c.fail("cannot concatenate scalars");
  int64_t axis = concat_axis(c, static_cast<int64_t>(first.size()));
  Shape out = first;
  out[axis] = 0;
  bool foldable = first.size() == 1;
  std::vector<Dim> vals;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const Shape &s = c.shape(i);
    if (s.size() != first.size()) c.fail("input ", i, " has rank ", s.size(), ", input 0 has ", first.size());
    if (c.dtype(i) != c.dtype(0))
      c.fail("input ", i, " has dtype ", dtype_name(c.dtype(i)), ", input 0 has ", dtype_name(c.dtype(0)));
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != axis)
        c.require_equal(first[d], s[d], "dim " + std::to_string(d) + " of input " + std::to_string(i) +
                                            " must equal input 0's");
    out[axis] = out[axis] + s[axis];
    auto v = c.dims_value(i);
    foldable = foldable && v;
    if (v) vals.insert(vals.end(), v->begin(), v->end());
  }
  c.set_output(0, c.dtype(0), out);
  if (foldable) fold_dims(c, 0, out, c.dtype(0), vals);
}

void lower_concat(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  int64_t axis = concat_axis(c, static_cast<int64_t>(os.size()));
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  // Empty inputs are skipped: a clamped read of them would still need element 0.
  std::vector<int> parts;
  std::vector<Dim> offsets{0};
  for (int i = 0; i < static_cast<int>(c.node().inputs.size()); ++i) {
    offsets.push_back(offsets.back() + c.in(i).shape[axis]);
    if (!c.store().canonical(c.in(i).shape[axis]).is_const(0)) parts.push_back(i);
  }
  if (parts.empty()) return c.define_output(0, v, zero_of(c.out_dtype(0)));
  // Walk backwards so that each select falls through to the later inputs.
  Expr value;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    const HTensor &t = c.in(*it);
    auto ii = oi;
    ii[axis] = clamp_index(c, oi[axis] - c.dim(offsets[*it]), t.shape[axis]);
    Expr read = t.at(ii);
    value = value.defined() ? Halide::select(oi[axis] < c.dim(offsets[*it + 1]), read, value) : read;
  }
  c.define_output(0, v, value);
  if (parts.size() > 1 && axis + 1 == static_cast<int64_t>(os.size())) c.set_pieces_along_inner(0);
}

// ---- Slice ------------------------------------------------------------------

struct SliceAxis {
  int64_t axis;
  Dim start;  // first element read, after clamping
  int64_t step;
  Dim len;
};

// The least value of `sym`, from its present lower bound up to 2^20, at
// which the store proves `x` non-negative; the symbol's facts are left at
// it. nullopt (facts unchanged) where there is none, as when x falls as sym
// grows.
std::optional<int64_t> least_min_for_nonnegative(ShapeStore &st, const Dim &x, const std::string &sym) {
  SymbolFacts &f = st.facts(sym);
  const int64_t old = f.min;
  auto proves = [&](int64_t m) {
    f.min = m;
    auto lb = st.lower_bound(x);
    return lb && *lb >= 0;
  };
  int64_t lo = old, hi = std::max<int64_t>(2 * old, 1);
  while (!proves(hi)) {
    if (hi >= (int64_t{1} << 20)) {
      f.min = old;
      return std::nullopt;
    }
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {  // proves(lo) is false, proves(hi) true
    const int64_t mid = lo + (hi - lo) / 2;
    (proves(mid) ? hi : lo) = mid;
  }
  f.min = hi;
  return hi;
}

// x + n where x < 0, clamped to [lo, hi], for an x whose sign is known only
// at run time. Dims have no select, so "x < 0" is the integer indicator
// min(max(-x, 0), 1), which is 1 for every x <= -1 and 0 for every x >= 0.
Dim run_time_index(const Dim &x, const Dim &n, const Dim &lo, const Dim &hi) {
  const Dim negative = min(max(-x, Dim(0)), Dim(1));
  return min(max(x + negative * n, lo), hi);
}

// numpy's index adjustment, which ONNX's reference follows: negative indices
// count from the end, then clamp to [0, n] (positive steps) or [-1, n-1]
// (negative steps). Where the sign is known at compile time the index stays a
// plain term. One of unknown sign in one symbol that grows with it (end =
// seq - 1, start = seq / 2 - 1, written from a dim to count from the front)
// is taken as non-negative at inference (`learn`): the store learns the least
// value of its symbol that makes it so, and a run-time check refuses inputs
// below it, naming the node; lowering (no `learn`) then finds the sign known.
// Any other (-T from a cache's tail, which is 0 at T = 0; M - M/2; T - P) is
// adjusted at run time by run_time_index, the same in inference and lowering.
Dim slice_index(const NodeContext &c, const ShapeStore &st, ShapeStore *learn, const Dim &x0, const Dim &n,
                bool neg_step, const char *what) {
  Dim x = st.canonical(x0);
  Dim lo = neg_step ? Dim(-1) : Dim(0), hi = neg_step ? n - 1 : n;
  if (x.is_const() && x.as_const() >= kHuge) return hi;
  if (x.is_const() && x.as_const() <= -kHuge) return lo;
  if (st.is_nonnegative(x)) return st.simplify_min(x, hi);
  auto up = st.upper_bound(x);
  if (up && *up < 0) return st.simplify_max(n + x, lo);
  std::set<std::string> syms;
  x.collect_symbols(syms);
  if (learn && syms.size() == 1) {
    const std::string &sym = *syms.begin();
    if (auto m = least_min_for_nonnegative(*learn, x, sym)) {
      const std::string &origin = learn->facts(sym).origin;
      learn->add_check({RuntimeCheck::AtLeast, Dim::symbol(sym), Dim(*m),
                        c.where() + ": " + what + " " + x.str() + " is read as counting from the front, so " + sym +
                            (origin.empty() ? "" : " (" + origin + ")") + " must be at least " + std::to_string(*m)});
      return st.simplify_min(x, hi);
    }
  }
  return run_time_index(x, n, lo, hi);
}

std::vector<SliceAxis> slice_plan(const NodeContext &c, const Shape &in, const ShapeStore &st, ShapeStore *learn) {
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<Dim> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  auto to_dims = [](const std::vector<int64_t> &v) { return std::vector<Dim>(v.begin(), v.end()); };
  if (c.opset() < 10) {
    starts = to_dims(c.attrs().get_ints("starts"));
    ends = to_dims(c.attrs().get_ints("ends"));
    axes = c.attrs().get_ints_opt("axes");
  } else {
    auto s = std::optional<std::vector<Dim>>(c.required_dims(1, "starts"));
    auto e = std::optional<std::vector<Dim>>(c.required_dims(2, "ends"));
    starts = *s;
    ends = *e;
    if (c.has_input(3)) axes = c.ints_input_or_attr(3, "");
    if (c.has_input(4)) steps = c.ints_input_or_attr(4, "");
  }
  size_t n = starts.size();
  if (ends.size() != n) c.fail("starts has ", n, " entries but ends has ", ends.size());
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < n; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (axes->size() != n) c.fail("axes has ", axes->size(), " entries but starts has ", n);
  if (steps && steps->size() != n) c.fail("steps has ", steps->size(), " entries but starts has ", n);
  auto norm = normalize_axes(c, *axes, r);
  std::vector<SliceAxis> plan;
  for (size_t i = 0; i < n; ++i) {
    int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0) c.fail("step of axis ", (*axes)[i], " is 0");
    const Dim &d = in[norm[i]];
    bool neg = step < 0;
    Dim s = slice_index(c, st, learn, starts[i], d, neg, "start"),
        e = slice_index(c, st, learn, ends[i], d, neg, "end");
    // From x < 0 back to the end (x[-3:]), n - max(n + x, 0), is min(-x, n):
    // Dim distributes the sum into the max where terms cancel.
    Dim diff = neg ? s - e : e - s;
    // Clamped indices already order themselves in these cases.
    bool ordered = st.is_nonnegative(diff) || (!neg && (e == st.canonical(d) || s.is_const(0))) ||
                   (neg && (e.is_const(-1) || s == st.canonical(d) - 1));
    int64_t k = neg ? -step : step;
    Dim len = floor_div(diff + (k - 1), Dim(k));
    if (!ordered) len = st.simplify_max(len, 0);
    plan.push_back({norm[i], s, step, len});
  }
  return plan;
}

void infer_slice(InferContext &c) {
  const Shape &in = c.shape(0);
  auto plan = slice_plan(c, in, c.store(), &c.store());
  Shape out = in;
  for (const auto &p : plan) out[p.axis] = p.len;
  c.set_output(0, c.dtype(0), out);
  // Slices of folded shape values: all indices constant by now.
  auto vals = c.dims_value(0);
  if (!vals || in.size() != 1) return;
  Dim len_dim = c.store().canonical(out[0]), start_dim = plan.empty() ? Dim(0) : c.store().canonical(plan[0].start);
  if (!len_dim.is_const() || !start_dim.is_const()) return;
  std::vector<Dim> picked;
  int64_t len = len_dim.as_const(), start = start_dim.as_const(), step = plan.empty() ? 1 : plan[0].step;
  for (int64_t i = 0; i < len; ++i) picked.push_back((*vals)[start + i * step]);
  fold_dims(c, 0, out, c.dtype(0), picked);
}

void lower_slice(LowerContext &c) {
  const HTensor &in = c.in(0);
  auto plan = slice_plan(c, in.shape, c.store(), nullptr);
  auto v = c.vars(in.rank());
  auto ii = c.exprs(v);
  for (const auto &p : plan) ii[p.axis] = c.dim(p.start) + ii[p.axis] * static_cast<int>(p.step);
  c.define_output(0, v, in.at(ii));
}

// ---- Split ------------------------------------------------------------------

int64_t split_axis(const NodeContext &c, int64_t rank) { return normalize_axis(c, c.attrs().get_int("axis", 0), rank); }

// The extent of each output along the axis. Lowering re-derives them, since an
// omitted output still occupies its part of the input.
struct SplitPlan {
  std::vector<Dim> sizes;
  bool even = false;  // no sizes given: the extent must divide evenly
};

SplitPlan split_sizes(const NodeContext &c, const Dim &d) {
  int n = c.num_outputs();
  if (n == 0) c.fail("has no outputs");
  std::optional<std::vector<int64_t>> sizes;
  // The split list: input 1 at opset 1 and 13+, the attribute in between.
  if (c.opset() < 2 || c.opset() >= 13) sizes = c.ints_input_or_attr(1, "split");
  else sizes = c.attrs().get_ints_opt("split");
  bool has_num = c.opset() >= 18 && c.attrs().has("num_outputs");
  if (has_num && sizes) c.fail("give either split or num_outputs, not both");
  if (has_num && c.attrs().get_int("num_outputs") != n)
    c.fail("num_outputs is ", c.attrs().get_int("num_outputs"), " but the node has ", n, " outputs");
  SplitPlan plan;
  std::vector<Dim> &out = plan.sizes;
  if (sizes) {
    if (static_cast<int>(sizes->size()) != n) c.fail("split has ", sizes->size(), " entries for ", n, " outputs");
    for (auto s : *sizes) {
      if (s < 0) c.fail("split size ", s, " is negative");
      out.push_back(s);
    }
  } else if (has_num) {
    // Opset 18: ceil-sized chunks, the last one takes what is left.
    Dim chunk = ceil_div(d, n);
    for (int i = 0; i < n; ++i) out.push_back(i + 1 < n ? chunk : d - chunk * (n - 1));
  } else {
    out.assign(n, floor_div(d, n));
    plan.even = true;
  }
  return plan;
}

void infer_split(InferContext &c) {
  const Shape &in = c.shape(0);
  if (in.empty()) c.fail("cannot split a scalar");
  int64_t axis = split_axis(c, c.rank(0));
  int n = c.num_outputs();
  Dim d = c.store().canonical(in[axis]);
  SplitPlan plan = split_sizes(c, d);
  const std::vector<Dim> &sizes = plan.sizes;
  Dim total = 0;
  for (const auto &s : sizes) {
    Dim x = c.store().canonical(s);
    if (x.is_const() && x.as_const() < 0) c.fail("cannot split ", d.str(), " into ", n, " chunks");
    total = total + s;
  }
  std::string what = "dim " + std::to_string(axis) + " (" + d.str() + ")";
  if (plan.even) {
    if (d.is_const() && d.as_const() % n != 0) c.fail("cannot split ", d.as_const(), " evenly into ", n, " outputs");
    if (!d.is_const() && !c.store().is_divisible(d, n))
      c.store().add_check({RuntimeCheck::Divisible, d, Dim(n),
                           c.where() + ": " + what + " must split evenly into " + std::to_string(n) + " outputs"});
  } else {
    c.require_equal(d, total, what + " must equal the sum of the split sizes");
  }
  for (int i = 0; i < n; ++i) {
    Shape s = in;
    s[axis] = sizes[i];
    c.set_output(i, c.dtype(0), s);
  }
}

void lower_split(LowerContext &c) {
  const HTensor &in = c.in(0);
  int64_t axis = split_axis(c, in.rank());
  std::vector<Dim> sizes = split_sizes(c, in.shape[axis]).sizes;
  Dim offset = 0;
  for (int i = 0; i < c.num_outputs(); ++i) {
    if (c.has_output(i)) {
      auto v = c.vars(in.rank());
      auto ii = c.exprs(v);
      ii[axis] = ii[axis] + c.dim(offset);
      c.define_output(i, v, in.at(ii));
    }
    offset = offset + sizes[i];
  }
}

// ---- Pad --------------------------------------------------------------------

struct PadSpec {
  std::string mode;
  std::vector<Dim> begin, end;  // per input axis
};

PadSpec pad_spec(const NodeContext &c, int64_t rank) {
  PadSpec p{c.attrs().get_string("mode", "constant"), std::vector<Dim>(rank, 0), std::vector<Dim>(rank, 0)};
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge") c.fail("pad mode '", p.mode, "' is not supported");
  std::vector<Dim> pads;
  if (c.opset() < 11) {
    // Opset 1 called the attribute "paddings".
    auto v = c.attrs().get_ints(c.opset() < 2 ? "paddings" : "pads");
    pads.assign(v.begin(), v.end());
  } else {
    auto v = std::optional<std::vector<Dim>>(c.required_dims(1, "pads"));
    pads = *v;
  }
  std::vector<int64_t> axes;
  if (c.opset() >= 18 && c.has_input(3)) {
    axes = normalize_axes(c, *c.ints_input_or_attr(3, ""), rank);
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) c.fail("pads has ", pads.size(), " entries for ", axes.size(), " axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    p.begin[axes[i]] = pads[i];
    p.end[axes[i]] = pads[i + axes.size()];
  }
  return p;
}

void infer_pad(InferContext &c) {
  const Shape &in = c.shape(0);
  PadSpec p = pad_spec(c, c.rank(0));
  ShapeStore &st = c.store();
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    Dim o = st.canonical(in[i] + p.begin[i] + p.end[i]);
    if (o.is_const() && o.as_const() < 0) c.fail("padding makes dim ", i, " negative (", o.as_const(), ")");
    out.push_back(o);
    if (p.mode == "constant" || (p.begin[i].is_const(0) && p.end[i].is_const(0))) continue;
    // Reflect needs more input than the pad; edge needs one element.
    Dim need = 1;
    if (p.mode == "reflect") {
      Dim b = st.canonical(p.begin[i]), e = st.canonical(p.end[i]);
      if (!b.is_const() || !e.is_const()) c.fail("reflect pads must be constants");
      need = std::max(b.as_const(), e.as_const()) + 1;
    }
    Dim d = st.canonical(in[i]);
    if (d.is_const() && d.as_const() < need.as_const())
      c.fail(p.mode, " padding of dim ", i, " needs at least ", need.as_const(), " elements, has ", d.as_const());
    if (!d.is_const())
      st.add_check({RuntimeCheck::AtLeast, d, need,
                    c.where() + ": " + p.mode + " padding needs dim " + std::to_string(i) + " (" + d.str() +
                        ") to be at least " + need.str()});
  }
  c.set_output(0, c.dtype(0), out);
}

void lower_pad(LowerContext &c) {
  const HTensor &in = c.in(0);
  PadSpec p = pad_spec(c, in.rank());
  Halide::Type ty = halide_type(in.dtype);
  Expr fill = Halide::cast(ty, 0);
  if (c.opset() < 11) fill = Halide::cast(ty, c.attrs().get_float("value", 0));
  else if (c.has_input(2)) fill = Halide::cast(ty, scalar_read(c.in(2)));
  auto v = c.vars(in.rank());
  std::vector<Expr> ii;
  Expr inside = Halide::cast(Halide::Bool(), 1);
  for (int i = 0; i < in.rank(); ++i) {
    Expr n = c.dim(in.shape[i]);
    Expr j = v[i] - c.dim(p.begin[i]);
    if (p.mode == "constant") inside = inside && j >= 0 && j < n;
    if (p.mode == "reflect") {
      j = Halide::select(j < 0, -j, j);
      j = Halide::select(j >= n, 2 * (n - 1) - j, j);
    }
    ii.push_back(clamp_index(c, j, in.shape[i]));
  }
  Expr read = in.at(ii);
  c.define_output(0, v, p.mode == "constant" ? Halide::select(inside, read, fill) : read);
}

}  // namespace

void register_index_ops(OpRegistry &r) {
  r.add("Gather", 1, OpKind::View, infer_gather, lower_gather);
  r.add("Concat", 1, OpKind::View, infer_concat, lower_concat);
  r.add("Slice", 1, OpKind::View, infer_slice, lower_slice);
  r.add("Split", 1, OpKind::View, infer_split, lower_split);
  r.add("Pad", 1, OpKind::View, infer_pad, lower_pad);
}

}  // namespace disco
