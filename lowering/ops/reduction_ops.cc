// Reductions over some axes of a tensor: Softmax / LogSoftmax,
// LayerNormalization, the Reduce* family and ArgMax / ArgMin. Each reduction
// is an explicit Func over the kept axes with an RDom over the reduced ones,
// registered as a stage so that the scheduler materializes it once instead of
// recomputing it for every consumer element. Values that a Softmax or a
// LayerNormalization reads more than once (its input when that is computed,
// a Softmax's exp) are Funcs too, registered as RowValues: stitch schedules
// keep them per row in cache.
#include <cmath>
#include <functional>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// ---- shared ----------------------------------------------------------------

// Calls a Func with an index in ONNX order.
Expr call(const Func &f, const std::vector<Expr> &idx) { return f(reversed(idx)); }

// The row max a softmax or log-sum-exp subtracts before exp(): Halide's max,
// without max_of's NaN selects. A NaN in the row reaches every result through
// exp(x - max) and the sum whatever this max makes of it.
Expr shift_max(const Expr &a, const Expr &b) { return Halide::max(a, b); }

// Which axes of a tensor a reduction folds. The Funcs built over it are
// indexed by the kept axes only, in ONNX order.
struct AxisReduction {
  Shape shape;
  std::vector<bool> reduced;

  int kept_rank() const {
    int n = 0;
    for (bool r : reduced) n += !r;
    return n;
  }
  // Reductions over a suffix of the axes read contiguous rows.
  StageKind stage_kind() const {
    size_t i = reduced.size();
    while (i > 0 && reduced[i - 1]) --i;
    for (size_t j = 0; j < i; ++j)
      if (reduced[j]) return StageKind::Reduction;
    return StageKind::RowReduction;
  }
  std::vector<Dim> reduced_extents() const {
    std::vector<Dim> e;
    for (size_t i = 0; i < shape.size(); ++i)
      if (reduced[i]) e.push_back(shape[i]);
    return e;
  }
  // The kept entries of a full index.
  std::vector<Expr> kept(const std::vector<Expr> &full) const {
    std::vector<Expr> k;
    for (size_t i = 0; i < full.size(); ++i)
      if (!reduced[i]) k.push_back(full[i]);
    return k;
  }
  // A full index from the kept entries and the reduced ones, each in order.
  std::vector<Expr> merge(const std::vector<Expr> &kept, const std::vector<Expr> &red) const {
    std::vector<Expr> full;
    size_t k = 0, r = 0;
    for (bool is_red : reduced) full.push_back(is_red ? red.at(r++) : kept.at(k++));
    return full;
  }
  Expr count(LowerContext &c) const {
    Expr n = 1;
    for (const auto &d : reduced_extents()) n = n * c.dim(d);
    return n;
  }
};

AxisReduction axes_from(const Shape &shape, int64_t first, int64_t last) {
  AxisReduction ax{shape, std::vector<bool>(shape.size(), false)};
  for (int64_t i = first; i < last; ++i) ax.reduced[i] = true;
  return ax;
}

// The RDom over the reduced axes, its variables returned in ONNX order.
std::vector<Expr> reduction_vars(LowerContext &c, const AxisReduction &ax) {
  return rdom_vars(make_rdom(c, ax.reduced_extents()));
}

using Combine = std::function<Expr(const Expr &acc, const Expr &v)>;
using ValueAt = std::function<Expr(const std::vector<Expr> &full_idx)>;

// f(kept) = combine(...combine(init, value(i0))..., value(in)) over the
// reduced positions; registered as a stage (Stage::vector_integers as given).
Func fold(LowerContext &c, const AxisReduction &ax, const std::string &name, const Expr &init, const Combine &combine,
          const ValueAt &value, bool vector_integers = false) {
  auto kv = c.vars(ax.kept_rank());
  auto kept = c.exprs(kv);
  auto lhs = reversed(kv);
  Func f = c.func(name);
  if (ax.reduced_extents().empty()) {
    f(lhs) = combine(init, value(kept));
  } else {
    f(lhs) = init;
    f(lhs) = combine(f(lhs), value(ax.merge(kept, reduction_vars(c, ax))));
  }
  Stage &s = c.add_stage(f, ax.stage_kind(), ax.kept_rank(), ax.reduced_extents().empty() ? Expr() : ax.count(c));
  s.vector_integers = vector_integers;
  if (!ax.reduced_extents().empty()) s.fold_inner = ax.reduced_extents().back();
  return f;
}

// Per-element values of the reduced tensor as a Func, registered as RowValues
// when the reduction is over rows. A plain buffer in the accumulation type is
// read directly: there is nothing to keep.
ValueAt row_values(LowerContext &c, const AxisReduction &ax, const std::string &name, const HTensor &in, Halide::Type t,
                   const ValueAt &value) {
  if (in.buffer && halide_type(in.dtype) == t) return value;
  auto v = c.vars(in.rank());
  Func f = c.func(name);
  f(reversed(v)) = value(c.exprs(v));
  if (ax.stage_kind() == StageKind::RowReduction) c.add_stage(f, StageKind::RowValues, in.rank());
  return [f](const std::vector<Expr> &i) { return call(f, i); };
}

// Transcendentals want a float type; integer tensors go through double.
Expr as_float(const Expr &e) { return e.type().is_float() ? e : Halide::cast(Halide::Float(64), e); }

void require_float(InferContext &c) {
  if (!dtype_is_float(c.dtype(0))) c.fail("input must be a float tensor, got ", dtype_name(c.dtype(0)));
}

// ---- Softmax / LogSoftmax --------------------------------------------------

// Whether a float32 softmax over `ax` may skip subtracting the row max: its
// input is bounded by `bound`, so no exp overflows or becomes denormal, and
// neither does a row's sum of exps (the row's length is a constant).
bool softmax_needs_no_max(const AxisReduction &ax, std::optional<double> bound) {
  if (!bound || *bound > 87) return false;
  double n = 1;
  for (const Dim &d : ax.reduced_extents()) {
    if (!d.is_const()) return false;
    n *= static_cast<double>(d.as_const());
  }
  return *bound + std::log(std::max(n, 1.0)) < 88;
}

// Before opset 13 the input is coerced to 2-D at `axis` (default 1) and each
// row of the trailing block normalized; from 13 on only `axis` (default -1).
AxisReduction softmax_axes(const NodeContext &c, const Shape &shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) c.fail("input must have rank >= 1");
  bool coerce = c.opset() < 13;
  int64_t axis = normalize_axis(c, c.attrs().get_int("axis", coerce ? 1 : -1), rank);
  return axes_from(shape, axis, coerce ? rank : axis + 1);
}

void infer_softmax(InferContext &c) {
  require_float(c);
  softmax_axes(c, c.shape(0));
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_softmax(LowerContext &c) {
  const HTensor &in = c.in(0);
  AxisReduction ax = softmax_axes(c, in.shape);
  Halide::Type t = acc_type(in.dtype);
  auto v = c.vars(in.rank());
  auto idx = c.exprs(v);
  Expr exp_value;
  if (c.node().op_type == "Softmax" && t == Halide::Float(32) &&
      c.input_bound_allows(0, [&](std::optional<double> b) { return softmax_needs_no_max(ax, b); })) {
    // A bounded input (a LayerNormalization's, say) cannot overflow exp(): no max pass,
    // and the input is read once.
    exp_value = math::exp_bounded(Halide::cast(t, in.at(idx)));
  } else {
    ValueAt x = row_values(c, ax, "x", in, t, [&](const std::vector<Expr> &i) { return Halide::cast(t, in.at(i)); });
    // Subtracting the row max keeps exp() from overflowing.
    Func mx = fold(c, ax, "max", t.min(), shift_max, x);
    auto shifted = [&](const std::vector<Expr> &i) { return x(i) - call(mx, ax.kept(i)); };
    if (c.node().op_type == "LogSoftmax") {
      Func sum = fold(c, ax, "sum", Halide::cast(t, 0), sum_of,
                      [&](const std::vector<Expr> &i) { return math::exp_nonpositive(shifted(i)); });
      // (x - m) - log sum, both steps strict: reassociated to x - (m + log
      // sum), large logits lost digits to the rounding of m + log sum (logits
      // near 1e4 came out 1e-4 off PyTorch's, near 1e5 2e-3).
      Expr lse = math::log(call(sum, ax.kept(idx)));
      c.define_output(0, v, Halide::strict_float(shifted(idx) - lse));
      return;
    }
    exp_value = math::exp_nonpositive(shifted(idx));
  }
  // The exp is read by the sum and by the output: one exp per element.
  Func e = c.func("exp");
  e(reversed(v)) = exp_value;
  if (ax.stage_kind() == StageKind::RowReduction) c.add_stage(e, StageKind::RowValues, in.rank());
  Func sum = fold(c, ax, "sum", Halide::cast(t, 0), sum_of, [&](const std::vector<Expr> &i) { return call(e, i); });
  // One division per row; the multiply per element vectorizes.
  c.define_output(0, v, call(e, idx) * (Halide::cast(t, 1) / call(sum, ax.kept(idx))));
}

// ---- LayerNormalization ----------------------------------------------------

struct LayerNormAttrs {
  int64_t axis;
  float epsilon;
  DType stash;
};

LayerNormAttrs layernorm_attrs(const NodeContext &c, int64_t rank) {
  if (rank == 0) c.fail("input must have rank >= 1");
  LayerNormAttrs a;
  a.axis = normalize_axis(c, c.attrs().get_int("axis", -1), rank);
  a.epsilon = c.attrs().get_float("epsilon", 1e-5f);
  a.stash = dtype_from_onnx(static_cast<int>(c.attrs().get_int("stash_type", 1)));
  if (!dtype_is_float(a.stash)) c.fail("stash_type must name a float type");
  return a;
}

// Scale and B cover the normalized axes, numpy-broadcast from the right.
void require_normalized_shape(InferContext &c, int i, int64_t axis) {
  const Shape &x = c.shape(0), &p = c.shape(i);
  std::string name = i == 1 ? "Scale" : "B";
  if (static_cast<int64_t>(p.size()) > static_cast<int64_t>(x.size()) - axis)
    c.fail(name, " ", shape_str(p), " has more dims than the normalized axes of ", shape_str(x));
  for (size_t j = 0; j < p.size(); ++j) {
    const Dim &d = x[j + x.size() - p.size()];
    if (!c.store().canonical(p[j]).is_const(1))
      c.require_equal(p[j], d, name + " dim " + std::to_string(j) + " must match the input's");
  }
}

void infer_layernorm(InferContext &c) {
  require_float(c);
  LayerNormAttrs a = layernorm_attrs(c, c.rank(0));
  require_normalized_shape(c, 1, a.axis);
  if (c.has_input(2)) require_normalized_shape(c, 2, a.axis);
  c.set_output(0, c.dtype(0), c.shape(0));
  // Mean and InvStdDev keep the normalized axes as 1s.
  Shape stat = c.shape(0);
  for (size_t i = a.axis; i < stat.size(); ++i) stat[i] = 1;
  c.set_output(1, a.stash, stat);
  c.set_output(2, a.stash, stat);
}

void lower_layernorm(LowerContext &c) {
  const HTensor &in = c.in(0);
  LayerNormAttrs a = layernorm_attrs(c, in.rank());
  AxisReduction ax = axes_from(in.shape, a.axis, in.rank());
  Halide::Type t = acc_type(in.dtype);
  if (a.stash == DType::F64) t = Halide::Float(64);
  // Read by both folds and the output.
  ValueAt x = row_values(c, ax, "x", in, t, [&](const std::vector<Expr> &i) { return Halide::cast(t, in.at(i)); });
  Expr n = Halide::cast(t, ax.count(c));
  Func sum = fold(c, ax, "sum", Halide::cast(t, 0), sum_of, x);
  auto mean = [&](const std::vector<Expr> &i) { return call(sum, ax.kept(i)) / n; };
  // Two passes: the variance of the centred values, not E[x^2] - E[x]^2.
  Func sq = fold(c, ax, "sqsum", Halide::cast(t, 0), sum_of, [&](const std::vector<Expr> &i) {
    Expr d = x(i) - mean(i);
    return d * d;
  });
  auto inv_std = [&](const std::vector<Expr> &i) {
    return math::rsqrt(call(sq, ax.kept(i)) / n + Halide::cast(t, a.epsilon));
  };
  auto v = c.vars(in.rank());
  auto idx = c.exprs(v);
  const Shape &out = c.out_shape(0);
  Expr y = (x(idx) - mean(idx)) * inv_std(idx) * Halide::cast(t, c.broadcast_read(1, idx, out));
  if (c.has_input(2)) y = y + Halide::cast(t, c.broadcast_read(2, idx, out));
  c.define_output(0, v, y);
  if (c.has_output(1)) c.define_output(1, v, mean(idx));
  if (c.has_output(2)) c.define_output(2, v, inv_std(idx));
}

// ---- Reduce* ---------------------------------------------------------------

struct ReduceSpec {
  AxisReduction axes;
  bool keepdims;
  bool noop;  // empty axes with noop_with_empty_axes: the input unchanged
};

// Axes come from the `axes` input where the opset has it (ReduceSum 13+, the
// others 18+), else from the attribute; none means all axes.
ReduceSpec reduce_spec(const NodeContext &c, const Shape &shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  ReduceSpec s{{shape, std::vector<bool>(shape.size(), false)}, c.attrs().get_int("keepdims", 1) != 0, false};
  auto axes = c.ints_input_or_attr(1, "axes").value_or(std::vector<int64_t>{});
  if (axes.empty()) {
    s.noop = c.attrs().get_int("noop_with_empty_axes", 0) != 0;
    if (!s.noop) s.axes.reduced.assign(shape.size(), true);
    return s;
  }
  for (int64_t a : axes) {
    int64_t i = normalize_axis(c, a, rank);
    if (s.axes.reduced[i]) c.fail("axis ", a, " is listed twice in axes");
    s.axes.reduced[i] = true;
  }
  return s;
}

Shape reduced_shape(const ReduceSpec &s) {
  if (s.noop) return s.axes.shape;
  Shape out;
  for (size_t i = 0; i < s.axes.shape.size(); ++i) {
    if (!s.axes.reduced[i] || s.keepdims) out.push_back(s.axes.reduced[i] ? Dim(1) : s.axes.shape[i]);
  }
  return out;
}

// A reduction of a 1-D shape value folds to a dim where the op has a
// ReduceMath::dims, so that a Reshape to it keeps one compile for every shape:
// tf2onnx's and Keras' Flatten write [batch, ReduceProd(Shape(x)[1:])], numel
// comes out as a ReduceProd of a Shape, torchvision's _topk_min as a
// ReduceMin. Without the fold the Reshape's target was known only at run time,
// and each input shape compiled its own values in. Constants are left to
// constant folding (which wraps as int64 does, where Dim's arithmetic throws).
void fold_reduced_dims(InferContext &c, const ReduceSpec &s, const Shape &out) {
  const auto *m = std::get_if<ReduceMath>(&c.def().math);
  if (!m || !m->dims || s.noop || s.axes.shape.size() != 1 || !s.axes.reduced[0]) return;
  const auto vals = c.dims_value(0);
  if (!vals || vals->empty()) return;
  const ShapeStore &st = c.store();
  bool all_const = true;
  for (const Dim &d : *vals) all_const = all_const && st.canonical(d).is_const();
  if (all_const) return;
  Dim r = (*vals)[0];
  try {
    for (size_t i = 1; i < vals->size(); ++i) r = m->dims(r, (*vals)[i], st);
  } catch (const Error &) {
    return;  // a coefficient past 64 bits: left to run time, as any unknown value
  }
  r = st.canonical(r);
  if (r.str().size() <= kMaxFoldedText) fold_dims(c, 0, out, c.dtype(0), {r});
}

void infer_reduce(InferContext &c) {
  ReduceSpec s = reduce_spec(c, c.shape(0));
  const Shape out = reduced_shape(s);
  c.set_output(0, c.dtype(0), out);
  fold_reduced_dims(c, s, out);
}

// The reduced value at the kept index `k`; `x` reads the input in the
// accumulation type `t`.
using ReduceValue = Expr (*)(LowerContext &c, const AxisReduction &ax, Halide::Type t, const ValueAt &x,
                             const std::vector<Expr> &k);

// One fold, as the op's ReduceMath says.
Expr fold_value(LowerContext &c, const AxisReduction &ax, Halide::Type t, const ValueAt &x,
                const std::vector<Expr> &k) {
  const ReduceMath &m = c.math<ReduceMath>();
  ValueAt element = x;
  if (m.element) element = [&](const std::vector<Expr> &i) { return m.element(x(i)); };
  Expr folded;
  if (m.float_key && t.is_float()) {
    // A float max or min folds on keys (ReduceMath::float_key): update is
    // then Halide's integer max or min, which rfactor can split into vector
    // partials, and whose accumulator chain is one instruction (math::max's
    // NaN selects made the column folds latency-bound).
    auto key = [&](const std::vector<Expr> &i) { return m.float_key(element(i)); };
    folded = math::from_key(call(fold(c, ax, m.stage, m.float_key(m.init(t)), m.update, key, true), k));
  } else {
    folded = call(fold(c, ax, m.stage, m.init(t), m.update, element), k);
  }
  return m.finalize ? m.finalize(folded, ax.count(c)) : folded;
}

// log(sum(exp(x - m))) + m with m the max: exp() cannot overflow. Where m is
// not finite the answer is m itself: -inf for a row of -inf (a fully masked
// row; an empty one) and +inf for a row holding +inf, as PyTorch's logsumexp,
// where x - m gave inf - inf = NaN; a NaN m stays NaN.
Expr log_sum_exp(LowerContext &c, const AxisReduction &ax, Halide::Type t, const ValueAt &x,
                 const std::vector<Expr> &k) {
  auto xf = [&](const std::vector<Expr> &i) { return as_float(x(i)); };
  Halide::Type ft = as_float(Halide::cast(t, 0)).type();
  Func mx = fold(c, ax, "max", ft.min(), shift_max, xf);
  Func s = fold(c, ax, "sumexp", Halide::cast(ft, 0), sum_of,
                [&](const std::vector<Expr> &i) { return math::exp_nonpositive(xf(i) - call(mx, ax.kept(i))); });
  Expr m = call(mx, k);
  return Halide::select(math::is_finite(m), math::log(call(s, k)) + m, m);
}

void lower_reduce_with(LowerContext &c, ReduceValue value) {
  const HTensor &in = c.in(0);
  ReduceSpec s = reduce_spec(c, in.shape);
  const Shape &out = c.out_shape(0);
  auto v = c.vars(static_cast<int>(out.size()));
  auto idx = c.exprs(v);
  if (s.noop) {
    c.define_output(0, v, in.at(idx));
    return;
  }
  Halide::Type t = acc_type(in.dtype);
  auto x = [&](const std::vector<Expr> &i) { return Halide::cast(t, in.at(i)); };
  std::vector<Expr> k = s.keepdims ? s.axes.kept(idx) : idx;
  c.define_output(0, v, value(c, s.axes, t, x, k));
}

void lower_reduce(LowerContext &c) { lower_reduce_with(c, fold_value); }
void lower_reduce_log_sum_exp(LowerContext &c) { lower_reduce_with(c, log_sum_exp); }

// ---- ArgMax / ArgMin -------------------------------------------------------

AxisReduction arg_axis(const NodeContext &c, const Shape &shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) c.fail("input must have rank >= 1");
  int64_t axis = normalize_axis(c, c.attrs().get_int("axis", 0), rank);
  return axes_from(shape, axis, axis + 1);
}

void infer_arg(InferContext &c) {
  AxisReduction ax = arg_axis(c, c.shape(0));
  ReduceSpec s{ax, c.attrs().get_int("keepdims", 1) != 0, false};
  c.set_output(0, DType::I64, reduced_shape(s));
}

void lower_arg(LowerContext &c) {
  const HTensor &in = c.in(0);
  AxisReduction ax = arg_axis(c, in.shape);
  bool is_max = c.node().op_type == "ArgMax";
  bool last = c.attrs().get_int("select_last_index", 0) != 0;
  auto kv = c.vars(ax.kept_rank());
  auto kept = c.exprs(kv);
  auto lhs = reversed(kv);
  // (best value, its index), seeded with element 0 so that ties and
  // infinities need no sentinel.
  Func f = c.func(is_max ? "argmax" : "argmin");
  f(lhs) = Halide::Tuple(in.at(ax.merge(kept, {0})), Halide::cast(Halide::Int(64), 0));
  std::vector<Expr> r = reduction_vars(c, ax);
  Expr x = in.at(ax.merge(kept, r));
  Expr best = f(lhs)[0];
  Expr better = is_max ? (last ? x >= best : x > best) : (last ? x <= best : x < best);
  if (x.type().is_float()) {
    // A NaN wins, for ArgMax and ArgMin alike, as in PyTorch and numpy (the
    // first NaN; the last with select_last_index), and once found stays:
    // comparisons with a NaN say false, and under Halide's float flags may
    // not even say that, so math::is_nan tests the bits.
    const Expr x_nan = math::is_nan(x), best_nan = math::is_nan(best);
    better = last ? (x_nan || (!best_nan && better)) : (!best_nan && (x_nan || better));
  }
  f(lhs) = Halide::Tuple(Halide::select(better, x, best),
                         Halide::select(better, Halide::cast(Halide::Int(64), r[0]), f(lhs)[1]));
  c.add_stage(f, ax.stage_kind(), ax.kept_rank());
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  auto idx = c.exprs(v);
  bool keepdims = c.attrs().get_int("keepdims", 1) != 0;
  std::vector<Expr> k = keepdims ? ax.kept(idx) : idx;
  c.define_output(0, v, f(reversed(k))[1]);
}

Expr zero(const Halide::Type &t) { return Halide::cast(t, 0); }

ReduceMath with_dims(ReduceMath m, Dim (*dims)(const Dim &, const Dim &, const ShapeStore &)) {
  m.dims = dims;
  return m;
}

void add_reduce(OpRegistry &r, const char *op, ReduceMath m) {
  r.add(op, 1, OpKind::Reduction, infer_reduce, lower_reduce, m);
}

}  // namespace

void register_reduction_ops(OpRegistry &r) {
  for (const char *op : {"Softmax", "LogSoftmax"}) r.add(op, 1, OpKind::Reduction, infer_softmax, lower_softmax);
  r.add("LayerNormalization", 17, OpKind::Reduction, infer_layernorm, lower_layernorm);
  using E = const Expr &;
  auto square = [](E x) { return x * x; };
  using D = const Dim &;
  using S = const ShapeStore &;
  add_reduce(r, "ReduceSum", with_dims({"sum", zero, sum_of}, [](D a, D b, S) { return a + b; }));
  add_reduce(r, "ReduceMean",
             {"sum", zero, sum_of, nullptr, mean_of});
  add_reduce(r, "ReduceSumSquare", {"sumsq", zero, sum_of, square});
  add_reduce(r, "ReduceL2", {"sumsq", zero, sum_of, square, [](E sum, E) { return math::sqrt(as_float(sum)); }});
  add_reduce(r, "ReduceL1", {"sumabs", zero, sum_of, [](E x) { return Halide::cast(x.type(), Halide::abs(x)); }});
  add_reduce(r, "ReduceLogSum", {"sum", zero, sum_of, nullptr, [](E sum, E) { return math::log(as_float(sum)); }});
  add_reduce(r, "ReduceMax",
             with_dims({"max", [](const Halide::Type &t) { return t.min(); }, max_of, nullptr, nullptr, math::max_key},
                       [](D a, D b, S st) { return st.simplify_max(a, b); }));
  add_reduce(r, "ReduceMin",
             with_dims({"min", [](const Halide::Type &t) { return t.max(); }, min_of, nullptr, nullptr, math::min_key},
                       [](D a, D b, S st) { return st.simplify_min(a, b); }));
  add_reduce(r, "ReduceProd",
             with_dims({"prod", [](const Halide::Type &t) { return Halide::cast(t, 1); }, product_of},
                       [](D a, D b, S) { return a * b; }));
  r.add("ReduceLogSumExp", 1, OpKind::Reduction, infer_reduce, lower_reduce_log_sum_exp);
  for (const char *op : {"ArgMax", "ArgMin"}) r.add(op, 1, OpKind::Reduction, infer_arg, lower_arg);
}

}  // namespace disco
