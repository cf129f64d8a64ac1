// View ops that rearrange a whole tensor: Unsqueeze, Squeeze, Reshape,
// Flatten, Transpose, Expand, Tile. Each lowering is a pure index remap; reads
// whose index Halide cannot bound by itself (div/mod by a symbolic extent) are
// clamped into the input, so bounds inference never asks for more than the
// input holds. Unsqueeze, Squeeze and Reshape pass folded shape values through.
#include <algorithm>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// ---- Unsqueeze, Squeeze -----------------------------------------------------

// Axes come from the attribute before opset 13 and from input 1 since.
std::vector<int64_t> unsqueeze_axes(const NodeContext &c, int64_t in_rank) {
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
std::vector<int64_t> squeeze_axes(const NodeContext &c, const Shape &in, const ShapeStore &st) {
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

// ---- Reshape, Flatten -------------------------------------------------------

std::vector<Dim> reshape_target(InferContext &c) {
  // Opset 1-4 took the shape as an attribute.
  if (c.opset() < 5) {
    auto s = c.attrs().get_ints("shape");
    return {s.begin(), s.end()};
  }
  auto d = std::optional<std::vector<Dim>>(c.required_dims(1, "the target shape"));
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
    // The other dims a whole multiple (2 or more) of the input's elements:
    // -1 would be a fraction at every shape with elements, and undefined
    // at none (a broken export's flatten, as torch 1.13 wrote one for a
    // stack after a transpose), so no run could succeed.
    const Dim times = st.canonical(floor_div(known, n_in));
    if (times.is_const() && times.as_const() >= 2 && st.canonical(floor_mod(known, n_in)).is_const(0)) {
      Shape target_shown = out;
      target_shown[infer_at] = -1;
      c.fail("cannot reshape ", shape_str(in), " to ", shape_str(target_shown), ": the dims other than -1 hold ",
             times.as_const(), " times the input's ", n_in.str(), " elements");
    }
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

// ---- Transpose --------------------------------------------------------------

std::vector<int64_t> transpose_perm(const NodeContext &c, int64_t rank) {
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
  // Which output axis walks the input's innermost one: when it is not the
  // output's innermost, a schedule that runs rows in order reads the input a
  // cache line per element.
  const int64_t inner = in.rank() - 1;
  for (size_t i = 0; i + 1 < perm.size(); ++i)
    if (perm[i] == inner) c.set_transposed_inner(0, static_cast<int>(i), in.f, perm);
}

// ---- Expand, Tile -----------------------------------------------------------

void infer_expand(InferContext &c) {
  auto target = std::optional<std::vector<Dim>>(c.required_dims(1, "the shape input"));
  if (c.rank(1) != 1) c.fail("the shape input must be 1-D, got rank ", c.rank(1));
  c.set_output(0, c.dtype(0), c.broadcast(c.shape(0), *target));
}

void lower_expand(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  c.define_output(0, v, c.broadcast_read(0, c.exprs(v), os));
}

// Repeats per axis: input 1 since opset 6; opset 1 had (tiles, axis) scalars.
std::vector<Dim> tile_repeats(const NodeContext &c, int64_t rank) {
  if (c.opset() < 6) {
    auto tiles = c.ints_value(1), axis = c.ints_value(2);
    if (!tiles || !axis || tiles->size() != 1 || axis->size() != 1)
      c.fail("tiles and axis must be scalars known at compile time");
    std::vector<Dim> r(rank, 1);
    r[normalize_axis(c, axis->at(0), rank)] = tiles->at(0);
    return r;
  }
  auto r = std::optional<std::vector<Dim>>(c.required_dims(1, "repeats"));
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

}  // namespace

void register_view_ops(OpRegistry &r) {
  r.add("Unsqueeze", 1, OpKind::View, infer_unsqueeze, lower_unsqueeze);
  r.add("Squeeze", 1, OpKind::View, infer_squeeze, lower_squeeze);
  r.add("Reshape", 1, OpKind::View, infer_reshape, lower_reshape);
  r.add("Flatten", 1, OpKind::View, infer_flatten, lower_reshape);
  r.add("Transpose", 1, OpKind::View, infer_transpose, lower_transpose);
  r.add("Expand", 8, OpKind::View, infer_expand, lower_expand);
  r.add("Tile", 1, OpKind::View, infer_tile, lower_tile);
}

}  // namespace disco
