// Ops that read or write a tensor at positions held in an index tensor:
// GatherElements, GatherND, ScatterElements (and the deprecated Scatter),
// ScatterND and MaxUnpool. Gathers are pure index remaps; scatters copy the
// data and then update it over an RDom of the updates, with the written
// position computed from the indices. Every data-dependent position, read or
// written, is wrapped (negative indices count from the end) and clamped into
// range, so an out-of-range index never touches memory outside the tensor.
// Scatter updates run in the updates' row-major order, so that with duplicate
// indices the last one wins (reduction none) as in ONNX's reference.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;

bool is_index_dtype(DType t) { return t == DType::I32 || t == DType::I64; }

void require_indices(InferContext &c, int i) {
  if (!is_index_dtype(c.dtype(i))) c.fail("indices must be int32 or int64, not ", dtype_name(c.dtype(i)));
}

// A data-dependent index along an axis of extent n: negative values count
// from the end, then the result is clamped into [0, n).
Expr wrap_index(LowerContext &c, const Expr &raw, const Dim &n) {
  Expr i = Halide::cast(Halide::Int(32), raw);
  i = Halide::select(i < 0, i + c.dim(n), i);
  return clamp_index(c, i, n);
}

// An index into `extent` taken from a position in another tensor: clamped
// unless the store knows the two extents are equal.
Expr fit_index(LowerContext &c, const Expr &i, const Dim &from, const Dim &extent) {
  return c.store().same_dim(from, extent) ? i : clamp_index(c, i, extent);
}

// ---- GatherElements ---------------------------------------------------------

int64_t elements_axis(const NodeContext &c, int64_t rank) {
  return normalize_axis(c, c.attrs().get_int("axis", 0), rank);
}

void infer_gather_elements(InferContext &c) {
  require_indices(c, 1);
  if (c.rank(0) < 1) c.fail("data must have rank >= 1");
  if (c.rank(1) != c.rank(0)) c.fail("indices must have the rank of data (", c.rank(0), "), got ", c.rank(1));
  elements_axis(c, c.rank(0));
  c.set_output(0, c.dtype(0), c.shape(1));
}

void lower_gather_elements(LowerContext &c) {
  const HTensor &data = c.in(0), &ind = c.in(1);
  int64_t axis = elements_axis(c, data.rank());
  auto v = c.vars(ind.rank());
  auto oi = c.exprs(v);
  std::vector<Expr> di;
  for (int d = 0; d < data.rank(); ++d)
    di.push_back(d == axis ? wrap_index(c, ind.at(oi), data.shape[d])
                           : fit_index(c, oi[d], ind.shape[d], data.shape[d]));
  c.define_output(0, v, data.at(di));
}

// ---- GatherND ---------------------------------------------------------------

struct NDPlan {
  int64_t batch = 0;  // leading dims shared by data and indices
  int64_t depth = 0;  // indices' last dim: how many data axes an index tuple names
};

// The index depth is the indices' last dim, which fixes the output rank, so
// it must be a constant.
NDPlan gather_nd_plan(const NodeContext &c, const Shape &data, const Shape &ind) {
  NDPlan p;
  p.batch = c.attrs().get_int("batch_dims", 0);
  int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(ind.size());
  if (r < 1 || q < 1) c.fail("data and indices must have rank >= 1");
  if (p.batch < 0 || p.batch >= std::min(r, q))
    c.fail("batch_dims ", p.batch, " must be in [0, min(rank(data), rank(indices)))");
  Dim last = c.store().canonical(ind.back());
  if (!last.is_const())
    c.fail("the last dim of indices (", last.str(), ") sets the output rank and must be a constant");
  p.depth = last.as_const();
  if (p.depth < 1 || p.depth > r - p.batch)
    c.fail("index depth ", p.depth, " must be in [1, ", r - p.batch, "] for data rank ", r, " and batch_dims ",
           p.batch);
  return p;
}

void infer_gather_nd(InferContext &c) {
  require_indices(c, 1);
  const Shape &data = c.shape(0), &ind = c.shape(1);
  NDPlan p = gather_nd_plan(c, data, ind);
  for (int64_t i = 0; i < p.batch; ++i)
    c.require_equal(data[i], ind[i], "batch dim " + std::to_string(i) + " of indices must equal data's");
  Shape out(ind.begin(), ind.end() - 1);
  out.insert(out.end(), data.begin() + p.batch + p.depth, data.end());
  c.set_output(0, c.dtype(0), out);
}

void lower_gather_nd(LowerContext &c) {
  const HTensor &data = c.in(0), &ind = c.in(1);
  NDPlan p = gather_nd_plan(c, data.shape, ind.shape);
  int q = ind.rank();
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  auto oi = c.exprs(v);
  std::vector<Expr> di(oi.begin(), oi.begin() + p.batch);
  std::vector<Expr> ii(oi.begin(), oi.begin() + (q - 1));
  ii.push_back(0);
  for (int64_t t = 0; t < p.depth; ++t) {
    ii.back() = static_cast<int>(t);
    di.push_back(wrap_index(c, ind.at(ii), data.shape[p.batch + t]));
  }
  di.insert(di.end(), oi.begin() + (q - 1), oi.end());
  c.define_output(0, v, data.at(di));
}

// ---- scatter helpers --------------------------------------------------------

using Combine = Expr (*)(const Expr &old, const Expr &update);

Combine scatter_combine(LowerContext &c) {
  std::string r = c.attrs().get_string("reduction", "none");
  if (r == "none") return [](const Expr &, const Expr &u) { return u; };
  if (r == "add") return [](const Expr &a, const Expr &u) { return a + u; };
  if (r == "mul") return [](const Expr &a, const Expr &u) { return a * u; };
  if (r == "max") return [](const Expr &a, const Expr &u) { return math::max(a, u); };
  if (r == "min") return [](const Expr &a, const Expr &u) { return math::min(a, u); };
  c.fail("unknown reduction '", r, "'");
}

void check_reduction(InferContext &c) {
  std::string r = c.attrs().get_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") c.fail("unknown reduction '", r, "'");
  if (r != "none" && c.dtype(0) == DType::Bool) c.fail("reduction '", r, "' is not supported for bool data");
}

// The output as a copy of input 0, to which the caller adds the scatter update.
Func copy_of_data(LowerContext &c) {
  const HTensor &data = c.in(0);
  Func f = c.func("out0");
  auto v = c.vars(data.rank());
  f(reversed(v)) = data.at(c.exprs(v));
  return f;
}

// f(at) = combine(f(at), value); at in ONNX order.
void scatter_update(LowerContext &c, Func &f, const std::vector<Expr> &at, const Expr &value) {
  auto lhs = reversed(at);
  Expr upd = Halide::cast(f.output_types()[0], value);
  f(lhs) = scatter_combine(c)(f(lhs), upd);
  c.set_output(0, f);
}

// ---- ScatterElements / Scatter ---------------------------------------------

void infer_scatter_elements(InferContext &c) {
  require_indices(c, 1);
  check_reduction(c);
  const Shape &data = c.shape(0), &ind = c.shape(1), &upd = c.shape(2);
  if (data.empty()) c.fail("data must have rank >= 1");
  if (ind.size() != data.size() || upd.size() != data.size())
    c.fail("data, indices and updates must have one rank, got ", data.size(), ", ", ind.size(), " and ", upd.size());
  if (c.dtype(2) != c.dtype(0)) c.fail("updates must have data's dtype");
  elements_axis(c, c.rank(0));
  for (size_t d = 0; d < ind.size(); ++d)
    c.require_equal(ind[d], upd[d], "dim " + std::to_string(d) + " of updates must equal indices'");
  c.set_output(0, c.dtype(0), data);
}

void lower_scatter_elements(LowerContext &c) {
  const HTensor &data = c.in(0), &ind = c.in(1), &upd = c.in(2);
  int64_t axis = elements_axis(c, data.rank());
  Func f = copy_of_data(c);
  auto r = rdom_vars(make_rdom(c, ind.shape));
  std::vector<Expr> at;
  for (int d = 0; d < data.rank(); ++d)
    at.push_back(d == axis ? wrap_index(c, ind.at(r), data.shape[d]) : fit_index(c, r[d], ind.shape[d], data.shape[d]));
  scatter_update(c, f, at, upd.at(r));
}

// ---- ScatterND --------------------------------------------------------------

// The index depth: the indices' last dim, or, when that is symbolic, what the
// ranks imply (rank(updates) = rank(indices) - 1 + rank(data) - depth).
int64_t scatter_nd_depth(const NodeContext &c, const Shape &data, const Shape &ind, const Shape &upd) {
  int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(ind.size());
  if (r < 1 || q < 1) c.fail("data and indices must have rank >= 1");
  int64_t k = q - 1 + r - static_cast<int64_t>(upd.size());
  if (k < 1 || k > r) c.fail("updates rank ", upd.size(), " does not fit data rank ", r, " and indices rank ", q);
  return k;
}

void infer_scatter_nd(InferContext &c) {
  require_indices(c, 1);
  check_reduction(c);
  const Shape &data = c.shape(0), &ind = c.shape(1), &upd = c.shape(2);
  if (c.dtype(2) != c.dtype(0)) c.fail("updates must have data's dtype");
  int64_t k = scatter_nd_depth(c, data, ind, upd);
  c.require_equal(ind.back(), k, "the last dim of indices must equal the index depth " + std::to_string(k));
  size_t q = ind.size();
  for (size_t d = 0; d + 1 < q; ++d)
    c.require_equal(upd[d], ind[d], "dim " + std::to_string(d) + " of updates must equal indices'");
  for (size_t d = k; d < data.size(); ++d)
    c.require_equal(upd[q - 1 + d - k], data[d],
                    "dim " + std::to_string(q - 1 + d - k) + " of updates must equal data dim " + std::to_string(d));
  c.set_output(0, c.dtype(0), data);
}

void lower_scatter_nd(LowerContext &c) {
  const HTensor &data = c.in(0), &ind = c.in(1), &upd = c.in(2);
  int64_t k = scatter_nd_depth(c, data.shape, ind.shape, upd.shape);
  int q = ind.rank();
  Func f = copy_of_data(c);
  auto r = rdom_vars(make_rdom(c, upd.shape));
  std::vector<Expr> ii(r.begin(), r.begin() + (q - 1)), at;
  ii.push_back(0);
  for (int64_t t = 0; t < k; ++t) {
    ii.back() = static_cast<int>(t);
    at.push_back(wrap_index(c, ind.at(ii), data.shape[t]));
  }
  at.insert(at.end(), r.begin() + (q - 1), r.end());
  scatter_update(c, f, at, upd.at(r));
}

// ---- MaxUnpool --------------------------------------------------------------

// Without output_shape, each spatial extent inverts MaxPool's:
// (in - 1) * stride - pads + kernel.
Shape unpool_shape(const NodeContext &c, const Shape &x) {
  size_t n = x.size() - 2;
  auto ks = c.attrs().get_ints("kernel_shape");
  if (ks.size() != n) c.fail("kernel_shape has ", ks.size(), " values for ", n, " spatial dims");
  auto strides = c.attrs().get_ints_opt("strides").value_or(std::vector<int64_t>(n, 1));
  auto pads = c.attrs().get_ints_opt("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (strides.size() != n || pads.size() != 2 * n) c.fail("strides or pads do not match ", n, " spatial dims");
  Shape out{x[0], x[1]};
  for (size_t i = 0; i < n; ++i) out.push_back((x[i + 2] - 1) * strides[i] - pads[i] - pads[i + n] + ks[i]);
  return out;
}

void infer_max_unpool(InferContext &c) {
  require_indices(c, 1);
  const Shape &x = c.shape(0);
  if (x.size() < 3) c.fail("X must be [N, C, spatial...], got ", shape_str(x));
  if (c.rank(1) != c.rank(0)) c.fail("I must have the shape of X");
  for (size_t d = 0; d < x.size(); ++d)
    c.require_equal(c.shape(1)[d], x[d], "dim " + std::to_string(d) + " of I must equal X's");
  Shape out = unpool_shape(c, x);
  if (c.has_input(2)) {
    auto given = c.required_dims(2, "output_shape");
    if (given.size() != x.size()) c.fail("output_shape has ", given.size(), " entries for rank ", x.size());
    out = Shape(given.begin(), given.end());
    c.require_equal(out[0], x[0], "output_shape[0] must equal the batch");
    c.require_equal(out[1], x[1], "output_shape[1] must equal the channels");
  }
  c.set_output(0, c.dtype(0), out);
}

void lower_max_unpool(LowerContext &c) {
  const HTensor &x = c.in(0), &ind = c.in(1);
  const Shape &os = c.out_shape(0);
  Func f = c.func("out0");
  auto v = c.vars(static_cast<int>(os.size()));
  f(reversed(v)) = zero_of(x.dtype);
  auto r = rdom_vars(make_rdom(c, x.shape));
  // I holds flat row-major offsets as MaxPool's Indices, into the default
  // unpooled shape even when output_shape is larger (as ONNX's reference).
  Shape def = unpool_shape(c, x.shape);
  Expr total = 1;
  for (const auto &d : def) total = total * c.dim(d);
  Expr flat = Halide::clamp(Halide::cast(Halide::Int(32), ind.at(r)), 0, Halide::max(total - 1, 0));
  std::vector<Expr> at(os.size());
  for (size_t d = os.size(); d-- > 0;) {
    Expr n = Halide::max(c.dim(def[d]), 1);
    at[d] = clamp_index(c, flat % n, os[d]);
    flat = flat / n;
  }
  f(reversed(at)) = x.at(r);
  c.set_output(0, f);
}

}  // namespace

void register_gather_scatter_ops(OpRegistry &r) {
  r.add("GatherElements", 11, OpKind::View, infer_gather_elements, lower_gather_elements);
  r.add("GatherND", 11, OpKind::View, infer_gather_nd, lower_gather_nd);
  r.add({"", "Scatter", 9, 10, OpKind::Opaque, infer_scatter_elements, lower_scatter_elements});
  r.add("ScatterElements", 11, OpKind::Opaque, infer_scatter_elements, lower_scatter_elements);
  r.add("ScatterND", 11, OpKind::Opaque, infer_scatter_nd, lower_scatter_nd);
  r.add("MaxUnpool", 9, OpKind::Opaque, infer_max_unpool, lower_max_unpool);
}

}  // namespace disco
