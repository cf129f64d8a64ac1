// Shape and view ops: Shape, Size, Gather, (Un)Squeeze, Concat, Slice,
// Reshape, Transpose, Flatten, Constant(OfShape), Expand, Range, Tile, Split,
// Pad; and the small elementwise ops that shape arithmetic leans on: Where,
// comparisons, logical ops, Clip, Min/Max/Sum/Mean.
//
// Inference keeps shapes symbolic: shape values flowing through
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape are folded to dims, so a
// model's `x.reshape(b, s, 12, 64)` gets a symbolic target. Lowerings are pure
// index remaps. Every read whose index Halide cannot bound by itself (data
// indices, div/mod by a symbolic extent, the losing side of a select) is
// clamped into the input, so bounds inference never asks for more than the
// input holds.
#include <algorithm>
#include <cmath>

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

// ---- shared helpers ----------------------------------------------------------

bool is_index_dtype(DType t) { return t == DType::I32 || t == DType::I64; }

Expr constant_expr(const TensorData &t, int64_t i, Halide::Type ty) {
  if (dtype_is_float(t.dtype)) return Halide::cast(ty, Expr(t.float_at(i)));
  return Halide::cast(ty, Expr(t.int_at(i)));
}

// ---- Shape, Size -------------------------------------------------------------

void infer_shape(InferContext &c) {
  const Shape &s = c.shape(0);
  int64_t r = static_cast<int64_t>(s.size()), start = 0, end = r;
  if (c.opset() >= 15) {
    // Opset 15's start/end are clamped, never rejected.
    start = c.attrs().get_int("start", 0);
    end = c.attrs().get_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
  }
  std::vector<Dim> dims(s.begin() + start, s.begin() + end);
  c.set_output(0, DType::I64, {Dim(static_cast<int64_t>(dims.size()))});
  c.set_dims_value(0, dims);
}

void infer_size(InferContext &c) {
  c.set_output(0, DType::I64, {});
  c.set_dims_value(0, {num_elements(c.shape(0))});
}

// ---- Gather ------------------------------------------------------------------

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
  Expr i = Halide::cast(Halide::Int(32), ind.at(std::vector<Expr>(oi.begin() + axis, oi.begin() + axis + q)));
  i = Halide::select(i < 0, i + c.dim(data.shape[axis]), i);
  std::vector<Expr> di(oi.begin(), oi.begin() + axis);
  di.push_back(clamp_index(c, i, data.shape[axis]));
  di.insert(di.end(), oi.begin() + axis + q, oi.end());
  c.define_output(0, v, data.at(di));
}

// ---- Unsqueeze, Squeeze --------------------------------------------------------

// Axes come from the attribute before opset 13 and from input 1 since.
template <typename Ctx>
std::vector<int64_t> unsqueeze_axes(const Ctx &c, int64_t in_rank) {
  auto axes = c.ints_input_or_attr(1, "axes");
  if (!axes) c.fail("needs axes");
  auto out = normalize_axes(c, *axes, in_rank + static_cast<int64_t>(axes->size()));
  std::sort(out.begin(), out.end());
  return out;
}

void infer_unsqueeze(InferContext &c) {
  const Shape &in = c.shape(0);
  auto axes = unsqueeze_axes(c, c.rank(0));
  Shape out;
  size_t k = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size() + axes.size()); ++d) {
    if (std::binary_search(axes.begin(), axes.end(), d))
      out.push_back(1);
    else
      out.push_back(in[k++]);
  }
  c.set_output(0, c.dtype(0), out);
  fold_passthrough(c, out);
}

void lower_unsqueeze(LowerContext &c) {
  auto axes = unsqueeze_axes(c, c.in(0).rank());
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  std::vector<Expr> ii;
  for (int64_t d = 0; d < static_cast<int64_t>(v.size()); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) ii.push_back(v[d]);
  c.define_output(0, v, c.in(0).at(ii));
}

// The squeezed axes: those given, else every dim that is 1 at compile time.
template <typename Ctx>
std::vector<int64_t> squeeze_axes(const Ctx &c, const Shape &in, const ShapeStore &st) {
  auto given = c.ints_input_or_attr(1, "axes");
  if (given) {
    auto axes = normalize_axes(c, *given, static_cast<int64_t>(in.size()));
    std::sort(axes.begin(), axes.end());
    return axes;
  }
  std::vector<int64_t> axes;
  for (size_t d = 0; d < in.size(); ++d) {
    Dim x = st.canonical(in[d]);
    if (x.is_const(1)) axes.push_back(static_cast<int64_t>(d));
    else if (st.can_be_one(x))
      c.fail("without axes, cannot tell whether dim ", d, " (", x.str(), ") is 1; give axes explicitly");
  }
  return axes;
}

void infer_squeeze(InferContext &c) {
  const Shape &in = c.shape(0);
  auto axes = squeeze_axes(c, in, c.store());
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d))) {
      out.push_back(in[d]);
      continue;
    }
    Dim x = c.store().canonical(in[d]);
    if (x.is_const() && !x.is_const(1)) c.fail("cannot squeeze dim ", d, " of extent ", x.as_const());
    c.require_equal(in[d], 1, "squeezed dim " + std::to_string(d) + " must be 1");
  }
  c.set_output(0, c.dtype(0), out);
  fold_passthrough(c, out);
}

void lower_squeeze(LowerContext &c) {
  const HTensor &in = c.in(0);
  auto axes = squeeze_axes(c, in.shape, c.store());
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  std::vector<Expr> ii;
  size_t k = 0;
  for (int d = 0; d < in.rank(); ++d)
    ii.push_back(std::binary_search(axes.begin(), axes.end(), d) ? Expr(0) : Expr(v.at(k++)));
  c.define_output(0, v, in.at(ii));
}

// ---- Concat --------------------------------------------------------------------

template <typename Ctx>
int64_t concat_axis(const Ctx &c, int64_t rank) {
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
}

// ---- Slice ---------------------------------------------------------------------

struct SliceAxis {
  int64_t axis;
  Dim start;  // first element read, after clamping
  int64_t step;
  Dim len;
};

// numpy's index adjustment, which ONNX's reference follows: negative indices
// count from the end, then clamp to [0, n] (positive steps) or [-1, n-1]
// (negative steps). Symbolic indices must have a sign known at compile time.
template <typename Ctx>
Dim slice_index(const Ctx &c, const ShapeStore &st, const Dim &x0, const Dim &n, bool neg_step, const char *what) {
  Dim x = st.canonical(x0);
  Dim lo = neg_step ? Dim(-1) : Dim(0), hi = neg_step ? n - 1 : n;
  if (x.is_const() && x.as_const() >= kHuge) return hi;
  if (x.is_const() && x.as_const() <= -kHuge) return lo;
  if (st.is_nonnegative(x)) return st.simplify_min(x, hi);
  auto up = st.upper_bound(x);
  if (up && *up < 0) return st.simplify_max(n + x, lo);
  c.fail(what, " ", x.str(), " has a sign unknown at compile time");
}

template <typename Ctx>
std::vector<SliceAxis> slice_plan(const Ctx &c, const Shape &in, const ShapeStore &st) {
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<Dim> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  auto to_dims = [](const std::vector<int64_t> &v) { return std::vector<Dim>(v.begin(), v.end()); };
  if (c.opset() < 10) {
    starts = to_dims(c.attrs().get_ints("starts"));
    ends = to_dims(c.attrs().get_ints("ends"));
    axes = c.attrs().get_ints_opt("axes");
  } else {
    auto s = c.dims_value(1), e = c.dims_value(2);
    if (!s) c.fail("starts must be known at compile time");
    if (!e) c.fail("ends must be known at compile time");
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
    Dim s = slice_index(c, st, starts[i], d, neg, "start"), e = slice_index(c, st, ends[i], d, neg, "end");
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
  auto plan = slice_plan(c, in, c.store());
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
  auto plan = slice_plan(c, in.shape, c.store());
  auto v = c.vars(in.rank());
  auto ii = c.exprs(v);
  for (const auto &p : plan) ii[p.axis] = c.dim(p.start) + ii[p.axis] * static_cast<int>(p.step);
  c.define_output(0, v, in.at(ii));
}

// ---- Reshape, Flatten ------------------------------------------------------------

std::vector<Dim> reshape_target(InferContext &c) {
  // Opset 1-4 took the shape as an attribute.
  if (c.opset() < 5) {
    auto s = c.attrs().get_ints("shape");
    return {s.begin(), s.end()};
  }
  auto d = c.dims_value(1);
  if (!d) c.fail("target shape must be known at compile time (a constant or Shape arithmetic)");
  if (c.rank(1) != 1) c.fail("target shape must be 1-D, got rank ", c.rank(1));
  return *d;
}

void infer_reshape(InferContext &c) {
  const Shape &in = c.shape(0);
  ShapeStore &st = c.store();
  std::vector<Dim> target = reshape_target(c);
  bool allowzero = c.opset() >= 14 && c.attrs().get_int("allowzero", 0) != 0;
  Shape out;
  int infer_at = -1;
  Dim known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    Dim t = st.canonical(target[i]);
    if (t.is_const(-1)) {
      if (infer_at >= 0) c.fail("target shape has more than one -1");
      infer_at = static_cast<int>(i);
      out.push_back(0);
      continue;
    }
    if (t.is_const(0) && !allowzero) {
      if (i >= in.size()) c.fail("target dim ", i, " is 0 (copy) but the input has rank ", in.size());
      t = in[i];
    } else if (t.is_const() && t.as_const() < 0) {
      c.fail("target dim ", i, " is ", t.as_const());
    }
    out.push_back(t);
    known = known * t;
  }
  Dim n_in = num_elements(in);
  if (infer_at >= 0) {
    if (allowzero && st.canonical(known).is_const(0)) c.fail("allowzero target has both 0 and -1");
    if (st.canonical(known).is_const(0)) c.fail("cannot infer -1 when the other dims multiply to 0");
    Dim rem = st.canonical(floor_mod(n_in, known));
    if (rem.is_const() && !rem.is_const(0))
      c.fail("cannot reshape ", shape_str(in), " to ", shape_str(out), ": ", n_in.str(), " elements are not a multiple of ",
             known.str());
    if (!rem.is_const())
      st.add_check({RuntimeCheck::Divisible, n_in, known,
                    c.where() + ": element count " + n_in.str() + " must be a multiple of " + known.str()});
    out[infer_at] = floor_div(n_in, known);
  }
  Dim n_out = num_elements(out);
  if (!st.same_dim(n_in, n_out)) {
    if (infer_at >= 0)
      st.add_product_equal(n_in, n_out);  // holds by the divisibility check
    else
      c.require_equal(n_in, n_out, "reshape from " + shape_str(in) + " to " + shape_str(out) +
                                       " must keep the element count");
  }
  c.set_output(0, c.dtype(0), out);
  fold_passthrough(c, out);
}

void infer_flatten(InferContext &c) {
  const Shape &in = c.shape(0);
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = c.attrs().get_int("axis", 1);
  // axis may equal the rank; negative axes arrived in opset 11.
  if (axis < (c.opset() >= 11 ? -r : 0) || axis > r) c.fail("axis ", axis, " is out of range for rank ", r);
  if (axis < 0) axis += r;
  Shape out{num_elements(Shape(in.begin(), in.begin() + axis)), num_elements(Shape(in.begin() + axis, in.end()))};
  c.set_output(0, c.dtype(0), out);
}

// Output index -> linear index -> input index. Leading and trailing dims that
// the two shapes share map straight through, so [b,s,768] -> [b,s,12,64]
// only remaps the last dims.
void lower_reshape(LowerContext &c) {
  const HTensor &in = c.in(0);
  const Shape &os = c.out_shape(0);
  const ShapeStore &st = c.store();
  if (st.same_shape(in.shape, os)) {
    c.set_output(0, in.f);
    return;
  }
  size_t ri = in.shape.size(), ro = os.size(), m = std::min(ri, ro), p = 0, s = 0;
  while (p < m && st.same_dim(in.shape[p], os[p])) ++p;
  while (s < m - p && st.same_dim(in.shape[ri - 1 - s], os[ro - 1 - s])) ++s;
  auto v = c.vars(static_cast<int>(ro));
  std::vector<Expr> ii(ri);
  for (size_t k = 0; k < p; ++k) ii[k] = v[k];
  for (size_t k = 0; k < s; ++k) ii[ri - 1 - k] = v[ro - 1 - k];
  Expr lin = 0;
  for (size_t k = p; k < ro - s; ++k) lin = lin * c.dim(os[k]) + v[k];
  for (size_t k = ri - s; k-- > p;) {
    ii[k] = clamp_index(c, k == p ? lin : lin % c.dim(in.shape[k]), in.shape[k]);
    lin = lin / c.dim(in.shape[k]);
  }
  c.define_output(0, v, in.at(ii));
}

// ---- Transpose -----------------------------------------------------------------

template <typename Ctx>
std::vector<int64_t> transpose_perm(const Ctx &c, int64_t rank) {
  auto perm = c.attrs().get_ints_opt("perm");
  if (!perm) {
    perm.emplace();
    for (int64_t i = rank - 1; i >= 0; --i) perm->push_back(i);
  }
  if (static_cast<int64_t>(perm->size()) != rank) c.fail("perm has ", perm->size(), " entries for rank ", rank);
  std::vector<bool> seen(rank, false);
  for (auto p : *perm) {
    if (p < 0 || p >= rank || seen[p]) c.fail("perm is not a permutation of 0..", rank - 1);
    seen[p] = true;
  }
  return *perm;
}

void infer_transpose(InferContext &c) {
  const Shape &in = c.shape(0);
  auto perm = transpose_perm(c, c.rank(0));
  Shape out;
  for (auto p : perm) out.push_back(in[p]);
  c.set_output(0, c.dtype(0), out);
}

void lower_transpose(LowerContext &c) {
  const HTensor &in = c.in(0);
  auto perm = transpose_perm(c, in.rank());
  auto v = c.vars(in.rank());
  std::vector<Expr> ii(in.rank());
  for (size_t i = 0; i < perm.size(); ++i) ii[perm[i]] = v[i];
  c.define_output(0, v, in.at(ii));
}

// ---- Constant, ConstantOfShape, Range ----------------------------------------------

void infer_constant(InferContext &c) {
  const AttrReader &a = c.attrs();
  if (a.has("sparse_value")) c.fail("sparse_value constants are not supported");
  if (a.has("value_string") || a.has("value_strings")) c.fail("string constants are not supported");
  int given = a.has("value") + a.has("value_float") + a.has("value_floats") + a.has("value_int") + a.has("value_ints");
  if (given != 1) c.fail("needs exactly one of value, value_float(s), value_int(s); got ", given);
  if (a.has("value")) return c.set_constant(0, a.get_tensor("value"));
  if (a.has("value_int")) return c.set_constant(0, TensorData::from_int64({a.get_int("value_int")}, {}));
  if (a.has("value_ints")) {
    auto v = a.get_ints("value_ints");
    return c.set_constant(0, TensorData::from_int64(v, {static_cast<int64_t>(v.size())}));
  }
  if (a.has("value_float")) return c.set_constant(0, TensorData::scalar_f32(a.get_float("value_float", 0)));
  auto f = a.get_floats("value_floats");
  TensorData t(DType::F32, {static_cast<int64_t>(f.size())});
  std::copy(f.begin(), f.end(), t.mutable_as<float>());
  c.set_constant(0, t);
}

TensorData fill_value(const AttrReader &a) {
  if (!a.has("value")) return TensorData::scalar_f32(0);
  return a.get_tensor("value");
}

void infer_constant_of_shape(InferContext &c) {
  TensorData value = fill_value(c.attrs());
  if (value.num_elements() != 1) c.fail("value must have one element, has ", value.num_elements());
  auto dims = c.dims_value(0);
  if (!dims) c.fail("the shape input must be known at compile time (a constant or Shape arithmetic)");
  Shape out;
  for (const auto &d : *dims) {
    Dim x = c.store().canonical(d);
    if (x.is_const() && x.as_const() < 0) c.fail("shape has a negative dim ", x.as_const());
    out.push_back(x);
  }
  c.set_output(0, value.dtype, out);
  // Small constant results fold, so Where/Equal chains over them keep folding.
  Dim n = c.store().canonical(num_elements(out));
  if (!n.is_const() || n.as_const() > kMaxFolded) return;
  std::vector<int64_t> shape;
  for (const auto &d : out) shape.push_back(d.as_const());
  TensorData t(value.dtype, shape);
  size_t es = dtype_size(value.dtype);
  for (int64_t i = 0; i < n.as_const(); ++i) std::copy(value.data(), value.data() + es, t.mutable_data() + i * es);
  c.set_constant(0, t);
}

void lower_constant_of_shape(LowerContext &c) {
  TensorData value = fill_value(c.attrs());
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  c.define_output(0, v, constant_expr(value, 0, halide_type(value.dtype)));
}

// Fills a Range whose inputs are constants: ONNX's count is
// max(ceil((limit - start) / delta), 0).
TensorData range_constant(InferContext &c) {
  DType t = c.dtype(0);
  const TensorData &s = *c.constant(0), &l = *c.constant(1), &d = *c.constant(2);
  if (dtype_is_float(t)) {
    double start = s.float_at(0), delta = d.float_at(0);
    if (delta == 0) c.fail("delta is 0");
    auto n = static_cast<int64_t>(std::max(std::ceil((l.float_at(0) - start) / delta), 0.0));
    TensorData out(t, {n});
    for (int64_t i = 0; i < n; ++i) {
      double x = start + static_cast<double>(i) * delta;
      if (t == DType::F32) out.mutable_as<float>()[i] = static_cast<float>(x);
      else if (t == DType::F64) out.mutable_as<double>()[i] = x;
      else c.fail("Range of dtype ", dtype_name(t), " is not supported");
    }
    return out;
  }
  int64_t start = s.int_at(0), delta = d.int_at(0), span = l.int_at(0) - start;
  if (delta == 0) c.fail("delta is 0");
  int64_t n = std::max<int64_t>(delta > 0 ? floor_div_int(span + delta - 1, delta) : floor_div_int(-span - delta - 1, -delta), 0);
  std::vector<int64_t> vals;
  for (int64_t i = 0; i < n; ++i) vals.push_back(start + i * delta);
  TensorData i64 = TensorData::from_int64(vals, {n});
  if (t == DType::I64) return i64;
  TensorData out(t, {n});
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case DType::I32: out.mutable_as<int32_t>()[i] = static_cast<int32_t>(vals[i]); break;
      case DType::I16: out.mutable_as<int16_t>()[i] = static_cast<int16_t>(vals[i]); break;
      default: c.fail("Range of dtype ", dtype_name(t), " is not supported");
    }
  }
  return out;
}

void infer_range(InferContext &c) {
  for (int i = 1; i < 3; ++i)
    if (c.dtype(i) != c.dtype(0)) c.fail("start, limit and delta must share a dtype");
  for (int i = 0; i < 3; ++i)
    if (num_elements(c.shape(i)) != Dim(1)) c.fail("input ", i, " must be a scalar");
  if (c.constant(0) && c.constant(1) && c.constant(2)) return c.set_constant(0, range_constant(c));
  auto s = c.dims_value(0), l = c.dims_value(1);
  auto d = c.ints_value(2);
  if (dtype_is_float(c.dtype(0)) || !s || !l || !d)
    c.fail("start and limit must be known integers (constants or shape values) and delta a constant");
  int64_t delta = d->at(0);
  if (delta == 0) c.fail("delta is 0");
  Dim span = delta > 0 ? l->at(0) - s->at(0) : s->at(0) - l->at(0);
  int64_t k = delta > 0 ? delta : -delta;
  Dim n = c.store().simplify_max(floor_div(span + (k - 1), Dim(k)), 0);
  c.set_output(0, c.dtype(0), {n});
  std::vector<Dim> vals;
  Dim cn = c.store().canonical(n);
  if (cn.is_const() && cn.as_const() <= kMaxFolded)
    for (int64_t i = 0; i < cn.as_const(); ++i) vals.push_back(s->at(0) + Dim(i * delta));
  if (cn.is_const() && cn.as_const() <= kMaxFolded) fold_dims(c, 0, {n}, c.dtype(0), vals);
}

void lower_range(LowerContext &c) {
  auto s = c.dims_value(0);
  auto d = c.ints_value(2);
  if (!s || !d) c.fail("start and delta must be known at compile time");
  auto v = c.vars(1);
  Expr x = Halide::cast(Halide::Int(64), c.dim(s->at(0))) + Halide::cast(Halide::Int(64), v[0]) * Expr(d->at(0));
  c.define_output(0, v, x);
}

// ---- Expand, Tile --------------------------------------------------------------------

void infer_expand(InferContext &c) {
  auto target = c.dims_value(1);
  if (!target) c.fail("the shape input must be known at compile time (a constant or Shape arithmetic)");
  if (c.rank(1) != 1) c.fail("the shape input must be 1-D, got rank ", c.rank(1));
  c.set_output(0, c.dtype(0), c.broadcast(c.shape(0), *target));
}

void lower_expand(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  c.define_output(0, v, c.broadcast_read(0, c.exprs(v), os));
}

// Repeats per axis: input 1 since opset 6; opset 1 had (tiles, axis) scalars.
template <typename Ctx>
std::vector<Dim> tile_repeats(const Ctx &c, int64_t rank) {
  if (c.opset() < 6) {
    auto tiles = c.ints_value(1), axis = c.ints_value(2);
    if (!tiles || !axis || tiles->size() != 1 || axis->size() != 1)
      c.fail("tiles and axis must be scalars known at compile time");
    std::vector<Dim> r(rank, 1);
    r[normalize_axis(c, axis->at(0), rank)] = tiles->at(0);
    return r;
  }
  auto r = c.dims_value(1);
  if (!r) c.fail("repeats must be known at compile time");
  if (static_cast<int64_t>(r->size()) != rank) c.fail("repeats has ", r->size(), " entries for rank ", rank);
  return *r;
}

void infer_tile(InferContext &c) {
  const Shape &in = c.shape(0);
  auto reps = tile_repeats(c, c.rank(0));
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    Dim r = c.store().canonical(reps[i]);
    if (r.is_const() && r.as_const() < 0) c.fail("repeat ", r.as_const(), " for axis ", i, " is negative");
    out.push_back(in[i] * r);
  }
  c.set_output(0, c.dtype(0), out);
}

void lower_tile(LowerContext &c) {
  const HTensor &in = c.in(0);
  auto reps = tile_repeats(c, in.rank());
  auto v = c.vars(in.rank());
  std::vector<Expr> ii;
  for (int i = 0; i < in.rank(); ++i)
    ii.push_back(c.store().canonical(reps[i]).is_const(1) ? Expr(v[i])
                                                           : clamp_index(c, v[i] % c.dim(in.shape[i]), in.shape[i]));
  c.define_output(0, v, in.at(ii));
}

// ---- Split -----------------------------------------------------------------------

template <typename Ctx>
int64_t split_axis(const Ctx &c, int64_t rank) {
  return normalize_axis(c, c.attrs().get_int("axis", 0), rank);
}

// The extent of each output along the axis. Lowering re-derives them, since an
// omitted output still occupies its part of the input.
struct SplitPlan {
  std::vector<Dim> sizes;
  bool even = false;  // no sizes given: the extent must divide evenly
};

template <typename Ctx>
SplitPlan split_sizes(const Ctx &c, const Dim &d) {
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

// ---- Pad ---------------------------------------------------------------------------

struct PadSpec {
  std::string mode;
  std::vector<Dim> begin, end;  // per input axis
};

template <typename Ctx>
PadSpec pad_spec(const Ctx &c, int64_t rank) {
  PadSpec p{c.attrs().get_string("mode", "constant"), std::vector<Dim>(rank, 0), std::vector<Dim>(rank, 0)};
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge") c.fail("pad mode '", p.mode, "' is not supported");
  std::vector<Dim> pads;
  if (c.opset() < 11) {
    // Opset 1 called the attribute "paddings".
    auto v = c.attrs().get_ints(c.opset() < 2 ? "paddings" : "pads");
    pads.assign(v.begin(), v.end());
  } else {
    auto v = c.dims_value(1);
    if (!v) c.fail("pads must be known at compile time");
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

// ---- Where, comparisons, logical ops -------------------------------------------------

// Opset 1-6 broadcasting: B is aligned to A at `axis` (default: trailing) and
// only when broadcast=1.
struct LegacyBroadcast {
  bool on = false;
  int64_t axis = 0;
};

template <typename Ctx>
LegacyBroadcast legacy_broadcast(const Ctx &c, int64_t ra, int64_t rb) {
  LegacyBroadcast lb;
  if (c.opset() >= 7 || c.attrs().get_int("broadcast", 0) == 0) return lb;
  lb.on = true;
  lb.axis = c.attrs().get_int("axis", ra - rb);
  if (lb.axis < 0 || lb.axis + rb > ra) c.fail("B of rank ", rb, " does not fit A of rank ", ra, " at axis ", lb.axis);
  return lb;
}

Shape infer_binary_shape(InferContext &c) {
  if (c.opset() >= 7) return c.broadcast(c.shape(0), c.shape(1));
  const Shape &a = c.shape(0), &b = c.shape(1);
  LegacyBroadcast lb = legacy_broadcast(c, c.rank(0), c.rank(1));
  if (!lb.on && a.size() != b.size()) c.fail("without broadcast=1, A and B need the same rank");
  for (size_t j = 0; j < b.size(); ++j)
    if (!c.store().canonical(b[j]).is_const(1) || !lb.on)
      c.require_equal(a[lb.axis + j], b[j], "dim " + std::to_string(j) + " of B must match A");
  return a;
}

Expr read_binary_operand(LowerContext &c, int i, const std::vector<Expr> &oi, const Shape &os) {
  if (c.opset() >= 7 || i == 0) return c.broadcast_read(i, oi, os);
  const HTensor &b = c.in(1);
  LegacyBroadcast lb = legacy_broadcast(c, static_cast<int64_t>(os.size()), b.rank());
  std::vector<Expr> ii;
  for (int j = 0; j < b.rank(); ++j)
    ii.push_back(c.store().canonical(b.shape[j]).is_const(1) ? Expr(0) : oi[lb.axis + j]);
  return b.at(ii);
}

// Compares folded shape values when the answer is known at compile time,
// e.g. Equal(shape, -1) in exported `expand` calls.
std::optional<bool> compare_dims(const ShapeStore &st, const std::string &op, const Dim &a, const Dim &b) {
  Dim d = st.canonical(a - b);
  auto lo = st.lower_bound(d), hi = st.upper_bound(d);
  bool zero = d.is_const(0), pos = lo && *lo > 0, neg = hi && *hi < 0;
  bool nonneg = lo && *lo >= 0, nonpos = hi && *hi <= 0;
  if (op == "Equal") {
    if (zero) return true;
    if (pos || neg) return false;
  } else if (op == "Less") {
    if (neg) return true;
    if (nonneg) return false;
  } else if (op == "Greater") {
    if (pos) return true;
    if (nonpos) return false;
  } else if (op == "LessOrEqual") {
    if (nonpos) return true;
    if (pos) return false;
  } else if (op == "GreaterOrEqual") {
    if (nonneg) return true;
    if (neg) return false;
  }
  return std::nullopt;
}

void fold_compare(InferContext &c, const Shape &out) {
  auto a = c.dims_value(0), b = c.dims_value(1);
  if (!a || !b || out.size() > 1 || dtype_is_float(c.dtype(0))) return;
  Dim n = c.store().canonical(num_elements(out));
  if (!n.is_const()) return;
  std::vector<int64_t> shape(out.size());
  if (!out.empty()) shape[0] = n.as_const();
  TensorData t(DType::Bool, shape);
  for (int64_t i = 0; i < n.as_const(); ++i) {
    const Dim &x = (*a)[a->size() == 1 ? 0 : i], &y = (*b)[b->size() == 1 ? 0 : i];
    auto r = compare_dims(c.store(), c.node().op_type, x, y);
    if (!r) return;
    t.mutable_as<uint8_t>()[i] = *r;
  }
  c.set_constant(0, t);
}

void infer_compare(InferContext &c) {
  if (c.dtype(0) != c.dtype(1))
    c.fail("inputs have different dtypes: ", dtype_name(c.dtype(0)), " and ", dtype_name(c.dtype(1)));
  const std::string &op = c.node().op_type;
  bool logical = op == "And" || op == "Or" || op == "Xor";
  if (logical && c.dtype(0) != DType::Bool) c.fail("inputs must be bool, not ", dtype_name(c.dtype(0)));
  Shape out = infer_binary_shape(c);
  c.set_output(0, DType::Bool, out);
  if (!logical) fold_compare(c, out);
}

void lower_compare(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  Expr a = read_binary_operand(c, 0, oi, os), b = read_binary_operand(c, 1, oi, os);
  const std::string &op = c.node().op_type;
  Expr r;
  if (op == "Equal") r = a == b;
  else if (op == "Less") r = a < b;
  else if (op == "Greater") r = a > b;
  else if (op == "LessOrEqual") r = a <= b;
  else if (op == "GreaterOrEqual") r = a >= b;
  else if (op == "And") r = a && b;
  else if (op == "Or") r = a || b;
  else if (op == "Xor") r = a != b;
  else c.fail("no lowering for this comparison");
  c.define_output(0, v, r);
}

void infer_where(InferContext &c) {
  if (c.dtype(0) != DType::Bool) c.fail("condition must be bool, not ", dtype_name(c.dtype(0)));
  if (c.dtype(1) != c.dtype(2))
    c.fail("X and Y have different dtypes: ", dtype_name(c.dtype(1)), " and ", dtype_name(c.dtype(2)));
  Shape out = c.broadcast(c.broadcast(c.shape(0), c.shape(1)), c.shape(2));
  c.set_output(0, c.dtype(1), out);
  auto cond = c.ints_value(0);
  auto x = c.dims_value(1), y = c.dims_value(2);
  Dim n = c.store().canonical(num_elements(out));
  if (!cond || !x || !y || out.size() > 1 || !n.is_const()) return;
  std::vector<Dim> vals;
  auto at = [](const auto &v, int64_t i) { return v[v.size() == 1 ? 0 : i]; };
  for (int64_t i = 0; i < n.as_const(); ++i) vals.push_back(at(*cond, i) ? at(*x, i) : at(*y, i));
  fold_dims(c, 0, out, c.dtype(1), vals);
}

void lower_where(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  c.define_output(0, v,
                  Halide::select(c.broadcast_read(0, oi, os), c.broadcast_read(1, oi, os), c.broadcast_read(2, oi, os)));
}

// ---- Clip, Min, Max, Sum, Mean -------------------------------------------------------

void infer_clip(InferContext &c) {
  for (int i = 1; i < 3; ++i) {
    if (!c.has_input(i)) continue;
    if (c.dtype(i) != c.dtype(0)) c.fail("input ", i, " must have the input's dtype ", dtype_name(c.dtype(0)));
    if (num_elements(c.shape(i)) != Dim(1)) c.fail("input ", i, " must be a scalar");
  }
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_clip(LowerContext &c) {
  auto v = c.vars(c.in(0).rank());
  Expr x = c.in(0).at(c.exprs(v));
  Halide::Type ty = x.type();
  // Before opset 11 the bounds were float attributes; since, optional inputs.
  if (c.opset() < 11) {
    if (c.attrs().has("min")) x = Halide::max(x, Halide::cast(ty, c.attrs().get_float("min", 0)));
    if (c.attrs().has("max")) x = Halide::min(x, Halide::cast(ty, c.attrs().get_float("max", 0)));
  } else {
    if (c.has_input(1)) x = Halide::max(x, Halide::cast(ty, scalar_read(c.in(1))));
    if (c.has_input(2)) x = Halide::min(x, Halide::cast(ty, scalar_read(c.in(2))));
  }
  c.define_output(0, v, x);
}

void infer_variadic(InferContext &c) {
  if (c.num_inputs() == 0) c.fail("needs at least one input");
  Shape out = c.shape(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    if (c.dtype(i) != c.dtype(0))
      c.fail("input ", i, " has dtype ", dtype_name(c.dtype(i)), ", input 0 has ", dtype_name(c.dtype(0)));
    out = c.broadcast(out, c.shape(i));
  }
  c.set_output(0, c.dtype(0), out);
}

void lower_variadic(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  const std::string &op = c.node().op_type;
  int n = static_cast<int>(c.node().inputs.size());
  Expr acc = c.broadcast_read(0, oi, os);
  for (int i = 1; i < n; ++i) {
    Expr x = c.broadcast_read(i, oi, os);
    acc = op == "Min" ? Halide::min(acc, x) : op == "Max" ? Halide::max(acc, x) : acc + x;
  }
  if (op == "Mean") acc = acc / Halide::cast(acc.type(), n);
  c.define_output(0, v, acc);
}

}  // namespace

void register_shape_ops(OpRegistry &r) {
  constexpr int kAny = 1 << 30;
  r.add({"", "Shape", 1, kAny, OpKind::ShapeOnly, infer_shape, nullptr});
  r.add({"", "Size", 1, kAny, OpKind::ShapeOnly, infer_size, nullptr});
  // Constant outputs are always folded.
  r.add({"", "Constant", 1, kAny, OpKind::ShapeOnly, infer_constant, nullptr});
  // Generators: out[i] depends on i alone, so they fuse like elementwise ops.
  r.add({"", "ConstantOfShape", 9, kAny, OpKind::Elementwise, infer_constant_of_shape, lower_constant_of_shape});
  r.add({"", "Range", 11, kAny, OpKind::Elementwise, infer_range, lower_range});

  r.add({"", "Gather", 1, kAny, OpKind::View, infer_gather, lower_gather});
  r.add({"", "Unsqueeze", 1, kAny, OpKind::View, infer_unsqueeze, lower_unsqueeze});
  r.add({"", "Squeeze", 1, kAny, OpKind::View, infer_squeeze, lower_squeeze});
  r.add({"", "Concat", 1, kAny, OpKind::View, infer_concat, lower_concat});
  r.add({"", "Slice", 1, kAny, OpKind::View, infer_slice, lower_slice});
  r.add({"", "Reshape", 1, kAny, OpKind::View, infer_reshape, lower_reshape});
  r.add({"", "Flatten", 1, kAny, OpKind::View, infer_flatten, lower_reshape});
  r.add({"", "Transpose", 1, kAny, OpKind::View, infer_transpose, lower_transpose});
  r.add({"", "Expand", 8, kAny, OpKind::View, infer_expand, lower_expand});
  r.add({"", "Tile", 1, kAny, OpKind::View, infer_tile, lower_tile});
  r.add({"", "Split", 1, kAny, OpKind::View, infer_split, lower_split});
  r.add({"", "Pad", 1, kAny, OpKind::View, infer_pad, lower_pad});

  r.add({"", "Where", 9, kAny, OpKind::Elementwise, infer_where, lower_where});
  for (const char *op : {"Equal", "Less", "Greater", "And", "Or", "Xor"})
    r.add({"", op, 1, kAny, OpKind::Elementwise, infer_compare, lower_compare});
  for (const char *op : {"LessOrEqual", "GreaterOrEqual"})
    r.add({"", op, 12, kAny, OpKind::Elementwise, infer_compare, lower_compare});
  r.add({"", "Clip", 1, kAny, OpKind::Elementwise, infer_clip, lower_clip});
  for (const char *op : {"Min", "Max", "Sum", "Mean"})
    r.add({"", op, 1, kAny, OpKind::Elementwise, infer_variadic, lower_variadic});
}

}  // namespace disco
