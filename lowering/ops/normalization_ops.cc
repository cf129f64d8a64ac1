// Normalizations by statistics over some axes of [N, C, spatial...]
// tensors: BatchNormalization (inference and training mode),
// InstanceNormalization, GroupNormalization, MeanVarianceNormalization,
// LpNormalization, and LRN (a sum over neighbouring channels). Means and
// variances are explicit reduction stages; the variance is that of the
// centred values (two passes), not E[x^2] - E[x]^2, which cancels badly.
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

using Index = std::vector<Expr>;
using ValueAt = std::function<Expr(const Index &)>;

// ---- shared ----------------------------------------------------------------

// The entries of `full` on the axes where `keep` is true.
Index pick(const Index &full, const std::vector<bool> &keep) {
  Index out;
  for (size_t i = 0; i < full.size(); ++i)
    if (keep[i]) out.push_back(full[i]);
  return out;
}

// Mean and population variance of `value` over the reduced axes of a tensor
// of `shape` (possibly a view that exists only as `value`). Both are stages
// indexed by the kept axes in ONNX order; mean(k) and var(k) read them.
struct Moments {
  Func mean_f, var_f;
  std::vector<bool> kept;
  Expr mean(const Index &k) const { return mean_f(reversed(k)); }
  Expr var(const Index &k) const { return var_f(reversed(k)); }
  // The statistics at a full index of the tensor.
  Expr mean_at(const Index &full) const { return mean(pick(full, kept)); }
  Expr var_at(const Index &full) const { return var(pick(full, kept)); }
};

Moments moments(LowerContext &c, const Shape &shape, const std::vector<bool> &reduced, Halide::Type t,
                const ValueAt &value) {
  Moments m;
  std::vector<Dim> red_extents;
  int kept_rank = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    m.kept.push_back(!reduced[i]);
    if (reduced[i])
      red_extents.push_back(shape[i]);
    else
      ++kept_rank;
  }
  // Reducing a suffix of the axes reads contiguous rows.
  size_t first_red = shape.size();
  while (first_red > 0 && reduced[first_red - 1]) --first_red;
  StageKind kind = StageKind::RowReduction;
  for (size_t i = 0; i < first_red; ++i)
    if (reduced[i]) kind = StageKind::Reduction;

  Expr count = Halide::cast(t, 1);
  for (const auto &d : red_extents) count = count * Halide::cast(t, c.dim(d));
  auto kv = c.vars(kept_rank);
  Index kept = c.exprs(kv);
  auto lhs = reversed(kv);
  // The full index from the kept vars and the reduction's vars.
  auto merge = [&](const Index &red) {
    Index full;
    size_t k = 0, r = 0;
    for (bool is_red : reduced) full.push_back(is_red ? red.at(r++) : kept.at(k++));
    return full;
  };
  Index r;
  if (!red_extents.empty()) r = rdom_vars(make_rdom(c, red_extents));
  auto x = [&](const Index &full) { return Halide::cast(t, value(full)); };

  m.mean_f = c.func("mean");
  m.var_f = c.func("var");
  if (red_extents.empty()) {
    m.mean_f(lhs) = x(merge({}));
    m.var_f(lhs) = Halide::cast(t, 0);
  } else {
    m.mean_f(lhs) = Halide::cast(t, 0);
    m.mean_f(lhs) += x(merge(r));
    m.mean_f(lhs) = m.mean_f(lhs) / count;
    m.var_f(lhs) = Halide::cast(t, 0);
    Expr d = x(merge(r)) - m.mean_f(lhs);
    m.var_f(lhs) += d * d;
    m.var_f(lhs) = m.var_f(lhs) / count;
  }
  c.add_stage(m.mean_f, kind, kept_rank);
  c.add_stage(m.var_f, kind, kept_rank);
  return m;
}

// Every axis but the channel axis (1) reduced, or only the spatial ones.
std::vector<bool> channel_stats_axes(size_t rank, bool reduce_batch) {
  std::vector<bool> r(rank, true);
  r[1] = false;
  if (!reduce_batch) r[0] = false;
  return r;
}

void require_float_input(InferContext &c, int i, const std::string &name) {
  if (!dtype_is_float(c.dtype(i))) c.fail(name, " must be a float tensor, got ", dtype_name(c.dtype(i)));
}

void require_nc(InferContext &c) {
  if (c.rank(0) < 2) c.fail("input must be [N, C, spatial...], got ", shape_str(c.shape(0)));
}

// A 1-D parameter input of length `len`.
void require_vector(InferContext &c, int i, const std::string &name, const Dim &len, const std::string &len_what) {
  if (c.rank(i) != 1) c.fail(name, " must be 1-D, got ", shape_str(c.shape(i)));
  require_float_input(c, i, name);
  c.require_equal(c.shape(i)[0], len, name + " length must equal " + len_what);
}

Expr read_param(LowerContext &c, int i, const Expr &k, Halide::Type t) { return Halide::cast(t, c.in(i).at({k})); }

// ---- BatchNormalization ----------------------------------------------------

// Training mode uses the batch's statistics and also outputs the running
// statistics. Before opset 14 it is implied by asking for those outputs.
bool bn_training(const NodeContext &c) {
  if (c.opset() >= 14) return c.attrs().get_int("training_mode", 0) != 0;
  return c.has_output(1) || c.has_output(2);
}

// Before opset 9, spatial=0 gives every activation (each element of X's
// dims after N) its own scale, B, mean and var, of shape X.shape[1:].
bool bn_per_activation(const NodeContext &c) { return c.opset() < 9 && c.attrs().get_int("spatial", 1) == 0; }

void infer_batchnorm(InferContext &c) {
  require_nc(c);
  require_float_input(c, 0, "X");
  static const char *names[] = {"", "scale", "B", "mean", "var"};
  bool training = bn_training(c);
  if (bn_per_activation(c)) {
    if (training) c.fail("spatial=0 in training mode is not supported");
    const Shape &x = c.shape(0);
    for (int i = 1; i <= 4; ++i) {
      require_float_input(c, i, names[i]);
      if (c.rank(i) != c.rank(0) - 1)
        c.fail(names[i], " must have X's dims after N with spatial=0, got ", shape_str(c.shape(i)));
      for (int j = 0; j < c.rank(i); ++j)
        c.require_equal(c.shape(i)[j], x[j + 1], std::string(names[i]) + " dim " + std::to_string(j) + " must equal X's");
    }
  } else {
    for (int i = 1; i <= 4; ++i) require_vector(c, i, names[i], c.shape(0)[1], "the channels (X dim 1)");
  }
  c.set_output(0, c.dtype(0), c.shape(0));
  for (int i = 1; i < c.num_outputs(); ++i) {
    if (!c.has_output(i)) continue;
    if (!training) c.fail("output ", i, " needs training_mode=1; inference mode has one output");
    if (i > 2) c.fail("output ", i, " (saved mean / variance, before opset 14) is not supported");
    c.set_output(i, c.dtype(i + 2), c.shape(i + 2));
  }
}

void lower_batchnorm(LowerContext &c) {
  const HTensor &x = c.in(0);
  Halide::Type t = acc_type(x.dtype);
  auto v = c.vars(x.rank());
  Index idx = c.exprs(v);
  float eps = c.attrs().get_float("epsilon", 1e-5f);
  Expr ch = idx[1];
  auto param = [&](int i) {
    return bn_per_activation(c) ? Halide::cast(t, c.in(i).at(Index(idx.begin() + 1, idx.end()))) : read_param(c, i, ch, t);
  };
  Expr mean = param(3), var = param(4);
  if (bn_training(c)) {
    Moments m = moments(c, x.shape, channel_stats_axes(x.rank(), true), t, [&](const Index &i) { return x.at(i); });
    mean = m.mean({ch});
    var = m.var({ch});
    // Running statistics: momentum weighs the given ones, the rest the batch's.
    Expr momentum = Halide::cast(t, c.attrs().get_float("momentum", 0.9f));
    auto cv = c.vars(1);
    Expr k = cv[0];
    Expr one = Halide::cast(t, 1);
    if (c.has_output(1)) c.define_output(1, cv, read_param(c, 3, k, t) * momentum + m.mean({k}) * (one - momentum));
    if (c.has_output(2)) c.define_output(2, cv, read_param(c, 4, k, t) * momentum + m.var({k}) * (one - momentum));
  }
  Expr inv_std = math::rsqrt(var + Halide::cast(t, eps));
  Expr y = (Halide::cast(t, x.at(idx)) - mean) * (param(1) * inv_std) + param(2);
  c.define_output(0, v, y);
}

// ---- InstanceNormalization -------------------------------------------------

void infer_instancenorm(InferContext &c) {
  require_nc(c);
  require_float_input(c, 0, "input");
  require_vector(c, 1, "scale", c.shape(0)[1], "the channels (input dim 1)");
  require_vector(c, 2, "B", c.shape(0)[1], "the channels (input dim 1)");
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_instancenorm(LowerContext &c) {
  const HTensor &x = c.in(0);
  Halide::Type t = acc_type(x.dtype);
  Moments m = moments(c, x.shape, channel_stats_axes(x.rank(), false), t, [&](const Index &i) { return x.at(i); });
  auto v = c.vars(x.rank());
  Index idx = c.exprs(v);
  Expr eps = Halide::cast(t, c.attrs().get_float("epsilon", 1e-5f));
  Expr y = (Halide::cast(t, x.at(idx)) - m.mean_at(idx)) / math::sqrt(m.var_at(idx) + eps);
  c.define_output(0, v, y * read_param(c, 1, idx[1], t) + read_param(c, 2, idx[1], t));
}

// ---- GroupNormalization ----------------------------------------------------

// Statistics per (n, group) over the group's channels and the spatial axes.
// Opset 18 has one scale and bias per group, opset 21 one per channel.
int64_t num_groups(const NodeContext &c) {
  int64_t g = c.attrs().get_int("num_groups");
  if (g < 1) c.fail("num_groups must be positive, got ", g);
  return g;
}

void infer_groupnorm(InferContext &c) {
  require_nc(c);
  require_float_input(c, 0, "X");
  int64_t g = num_groups(c);
  Dim ch = c.store().canonical(c.shape(0)[1]);
  if (ch.is_const() && ch.as_const() % g != 0) c.fail("channels ", ch.as_const(), " not divisible by num_groups ", g);
  if (!ch.is_const())
    c.store().add_check({RuntimeCheck::Divisible, ch, g, c.where() + ": channels must be divisible by num_groups"});
  bool per_channel = c.opset() >= 21;
  Dim len = per_channel ? c.shape(0)[1] : Dim(g);
  std::string what = per_channel ? "the channels (X dim 1)" : "num_groups";
  require_vector(c, 1, "scale", len, what);
  require_vector(c, 2, "bias", len, what);
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_groupnorm(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t g = num_groups(c);
  Halide::Type t = acc_type(x.dtype);
  if (c.opset() >= 21 && dtype_from_onnx(static_cast<int>(c.attrs().get_int("stash_type", 1))) == DType::F64)
    t = Halide::Float(64);
  // The view [N, G, C/G, spatial...]; its channel in group gi, slot j is gi * (C/G) + j.
  Dim per_group = floor_div(x.shape[1], Dim(g));
  Shape view{x.shape[0], Dim(g), per_group};
  view.insert(view.end(), x.shape.begin() + 2, x.shape.end());
  Expr pg = c.dim(per_group);
  Moments m = moments(c, view, channel_stats_axes(view.size(), false), t, [&](const Index &i) {
    Index xi{i[0], i[1] * pg + i[2]};
    xi.insert(xi.end(), i.begin() + 3, i.end());
    return x.at(xi);
  });
  auto v = c.vars(x.rank());
  Index idx = c.exprs(v);
  Expr group = idx[1] / pg;
  Expr eps = Halide::cast(t, c.attrs().get_float("epsilon", 1e-5f));
  Expr y = (Halide::cast(t, x.at(idx)) - m.mean({idx[0], group})) / math::sqrt(m.var({idx[0], group}) + eps);
  Expr p = c.opset() >= 21 ? idx[1] : group;
  c.define_output(0, v, y * read_param(c, 1, p, t) + read_param(c, 2, p, t));
}

// ---- MeanVarianceNormalization ---------------------------------------------

std::vector<bool> mvn_axes(const NodeContext &c, int64_t rank) {
  auto axes = c.attrs().get_ints_opt("axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<bool> reduced(rank, false);
  for (auto a : normalize_axes(c, axes, rank)) reduced[a] = true;
  return reduced;
}

void infer_mvn(InferContext &c) {
  require_float_input(c, 0, "X");
  mvn_axes(c, c.rank(0));
  c.set_output(0, c.dtype(0), c.shape(0));
}

// (x - mean) / (std + 1e-9), as ONNX's function body defines it.
void lower_mvn(LowerContext &c) {
  const HTensor &x = c.in(0);
  Halide::Type t = acc_type(x.dtype);
  Moments m = moments(c, x.shape, mvn_axes(c, x.rank()), t, [&](const Index &i) { return x.at(i); });
  auto v = c.vars(x.rank());
  Index idx = c.exprs(v);
  Expr y = (Halide::cast(t, x.at(idx)) - m.mean_at(idx)) / (math::sqrt(m.var_at(idx)) + Halide::cast(t, 1e-9f));
  c.define_output(0, v, y);
}

// ---- LpNormalization -------------------------------------------------------

void infer_lpnorm(InferContext &c) {
  require_float_input(c, 0, "input");
  if (c.rank(0) == 0) c.fail("input must have rank >= 1");
  normalize_axis(c, c.attrs().get_int("axis", -1), c.rank(0));
  int64_t p = c.attrs().get_int("p", 2);
  if (p != 1 && p != 2) c.fail("p must be 1 or 2, got ", p);
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_lpnorm(LowerContext &c) {
  const HTensor &x = c.in(0);
  int rank = x.rank();
  int64_t axis = normalize_axis(c, c.attrs().get_int("axis", -1), rank);
  bool l1 = c.attrs().get_int("p", 2) == 1;
  Halide::Type t = acc_type(x.dtype);
  auto kv = c.vars(rank - 1);
  Index kept = c.exprs(kv);
  auto full = [&](const Index &k, const Expr &a) {
    Index i(k.begin(), k.begin() + axis);
    i.push_back(a);
    i.insert(i.end(), k.begin() + axis, k.end());
    return i;
  };
  Halide::RDom r(0, c.dim(x.shape[axis]));
  Expr xr = Halide::cast(t, x.at(full(kept, r)));
  Func norm = c.func("norm");
  norm(reversed(kv)) = Halide::cast(t, 0);
  norm(reversed(kv)) += l1 ? Halide::abs(xr) : xr * xr;
  c.add_stage(norm, axis == rank - 1 ? StageKind::RowReduction : StageKind::Reduction, rank - 1);
  auto v = c.vars(rank);
  Index idx = c.exprs(v);
  Index k = idx;
  k.erase(k.begin() + axis);
  Expr n = norm(reversed(k));
  if (!l1) n = math::sqrt(n);
  // A zero vector stays zero rather than becoming NaN.
  Expr xv = Halide::cast(t, x.at(idx));
  c.define_output(0, v, Halide::select(n == Halide::cast(t, 0), xv, xv / n));
}

// ---- LRN -------------------------------------------------------------------

void infer_lrn(InferContext &c) {
  require_nc(c);
  require_float_input(c, 0, "X");
  if (c.attrs().get_int("size") < 1) c.fail("size must be positive");
  c.set_output(0, c.dtype(0), c.shape(0));
}

// y = x / (bias + alpha / size * sum of x^2 over channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.
void lower_lrn(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t size = c.attrs().get_int("size");
  Halide::Type t = acc_type(x.dtype);
  auto v = c.vars(x.rank());
  Index idx = c.exprs(v);
  Halide::RDom r(0, static_cast<int32_t>(size));
  Expr ch = idx[1] - static_cast<int32_t>((size - 1) / 2) + r;
  Expr channels = c.dim(x.shape[1]);
  Index xi = idx;
  xi[1] = Halide::clamp(ch, 0, channels - 1);
  Expr xr = Halide::cast(t, x.at(xi));
  Func sq = c.func("sqsum");
  sq(reversed(v)) = Halide::cast(t, 0);
  sq(reversed(v)) += Halide::select(ch >= 0 && ch < channels, xr * xr, Halide::cast(t, 0));
  c.add_stage(sq, StageKind::Reduction, x.rank());
  Expr alpha = Halide::cast(t, c.attrs().get_float("alpha", 1e-4f) / static_cast<float>(size));
  Expr beta = Halide::cast(t, c.attrs().get_float("beta", 0.75f));
  Expr bias = Halide::cast(t, c.attrs().get_float("bias", 1.0f));
  Expr denom = math::pow(bias + alpha * sq(reversed(v)), beta);
  c.define_output(0, v, Halide::cast(t, x.at(idx)) / denom);
}

}  // namespace

void register_normalization_ops(OpRegistry &r) {
  // Opsets 1-5 add consumed_inputs (an optimizer's hint) and is_test, which
  // the outputs asked for already imply.
  r.add("BatchNormalization", 1, OpKind::Elementwise, infer_batchnorm, lower_batchnorm);
  r.add("InstanceNormalization", 1, OpKind::Reduction, infer_instancenorm, lower_instancenorm);
  r.add("GroupNormalization", 18, OpKind::Reduction, infer_groupnorm, lower_groupnorm);
  r.add("MeanVarianceNormalization", 9, OpKind::Reduction, infer_mvn, lower_mvn);
  r.add("LpNormalization", 1, OpKind::Reduction, infer_lpnorm, lower_lpnorm);
  r.add("LRN", 1, OpKind::Reduction, infer_lrn, lower_lrn);
}

}  // namespace disco
