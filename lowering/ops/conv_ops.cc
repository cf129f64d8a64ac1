// Sliding-window ops over [N, C, spatial...] tensors: Conv, MaxPool (with its
// optional Indices output), AveragePool and the global pools (BatchNormalization
// is with the other normalizations, in normalization_ops.cc).
// Output extents are symbolic Dim expressions of the input extents; padded
// reads are guarded with a select over a clamped index, so nothing is ever
// read outside the input.
#include <functional>
#include <optional>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"
#include "lowering/ops/window.h"
#include "lowering/weight_layout.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// ---- Conv ------------------------------------------------------------------

void infer_conv(InferContext &c) {
  if (c.dtype(0) != c.dtype(1))
    c.fail("X and W have different dtypes: ", dtype_name(c.dtype(0)), " and ", dtype_name(c.dtype(1)));
  c.set_output(0, c.dtype(0), infer_conv_shape(c, ConvInputs{}));
}

void lower_conv(LowerContext &c) {
  Halide::Type acc = acc_type(c.out_dtype(0));
  auto v = c.vars(c.in(0).rank());
  auto read = [&](int i) {
    return [&, i](const std::vector<Expr> &idx) { return Halide::cast(acc, c.in(i).at(idx)); };
  };
  Expr init = c.has_input(2) ? Halide::cast(acc, c.in(2).at({v[1]})) : Halide::cast(acc, 0);
  if (!acc.is_float()) {
    define_accumulated(c, v, acc, "conv", [&](Func &f, const std::vector<Var> &) {
      define_conv_sum(c, ConvInputs{}, acc, read(0), read(1), init, f, output_domain(c, v));
    });
    return;
  }
  // A float sum is always a stage: the x86 conv template keeps a tile of it in registers.
  SumDomain d = has_channels_last_weight(c.attrs()) ? flat_domain(c, v) : output_domain(c, v);
  define_sum_stage(c, v, d, "conv", [&](Func &f) { define_conv_sum(c, ConvInputs{}, acc, read(0), read(1), init, f, d); });
}

// ---- pools -----------------------------------------------------------------

std::vector<Window> pool_geometry(const AttrReader &a, const std::string &where, const Shape &x) {
  auto ks = a.get_ints("kernel_shape");
  if (ks.size() != x.size() - 2)
    fail(where, ": kernel_shape has ", ks.size(), " values for ", x.size() - 2, " spatial dims");
  std::vector<Dim> kernel;
  for (auto k : ks) {
    if (k < 1) fail(where, ": kernel_shape must be positive, got ", k);
    kernel.emplace_back(k);
  }
  return window_geometry(a, where, x, kernel, a.get_int("ceil_mode", 0) != 0);
}

void infer_pool(InferContext &c) {
  require_spatial_input(c, 1);
  auto geo = pool_geometry(c.attrs(), c.where(), c.shape(0));
  check_outputs_positive(c, geo);
  Shape out = windowed_shape(c.shape(0)[0], c.shape(0)[1], geo);
  c.set_output(0, c.dtype(0), out);
  if (c.node().op_type == "MaxPool" && c.has_output(1)) {
    int64_t order = c.attrs().get_int("storage_order", 0);
    if (order != 0 && order != 1) c.fail("storage_order must be 0 or 1, got ", order);
    c.set_output(1, DType::I64, out);
  }
}

// MaxPool with its Indices output: the flat offset of each window's first
// maximum in X (onnxruntime's convention: N and C row-major, the spatial
// axes row-major, or column-major with storage_order 1), or -1 when no
// element beats the lowest value. The (max, index) pair is one Tuple stage.
void lower_max_pool_with_indices(LowerContext &c, const std::vector<Var> &v, const std::vector<Expr> &xi,
                                 const Expr &value, const Expr &neutral) {
  const HTensor &x = c.in(0);
  Expr spatial = 0;
  if (c.attrs().get_int("storage_order", 0) == 0) {
    for (int i = 2; i < x.rank(); ++i) spatial = spatial * c.dim(x.shape[i]) + xi[i];
  } else {
    for (int i = x.rank() - 1; i >= 2; --i) spatial = spatial * c.dim(x.shape[i]) + xi[i];
  }
  Expr plane = 1;
  for (int i = 2; i < x.rank(); ++i) plane = plane * c.dim(x.shape[i]);
  Expr flat = Halide::cast(Halide::Int(64), (xi[0] * c.dim(x.shape[1]) + xi[1]) * plane + spatial);
  Func f = c.func("argmax");
  auto lhs = reversed(v);
  f(lhs) = Halide::Tuple(neutral, Halide::cast(Halide::Int(64), -1));
  Expr better = value > f(lhs)[0];
  f(lhs) = Halide::Tuple(Halide::select(better, value, f(lhs)[0]), Halide::select(better, flat, f(lhs)[1]));
  c.add_stage(f, StageKind::Reduction, static_cast<int>(v.size()));
  c.define_output(0, v, f(lhs)[0]);
  c.define_output(1, v, f(lhs)[1]);
}

// How many of a window's kernel positions on one axis land in [lo, hi):
// positions are base + k * dilation for k in [0, kernel).
Expr positions_in(const Expr &base, const Expr &kernel, int32_t dilation, const Expr &lo, const Expr &hi) {
  // First k with base + k*d >= lo, and first k with base + k*d >= hi; Halide
  // division floors, so (a + d - 1) / d is the ceiling for negative a too.
  Expr first = Halide::clamp((lo - base + dilation - 1) / dilation, 0, kernel);
  Expr end = Halide::clamp((hi - base + dilation - 1) / dilation, 0, kernel);
  return Halide::max(end - first, 0);
}

// The most taps a pool window unrolls into one expression.
constexpr int64_t kMostUnrolledTaps = 49;

// The window's taps, when its kernel is constant and small enough to unroll.
std::optional<std::vector<std::vector<int32_t>>> unrolled_taps(const std::vector<Window> &geo) {
  std::vector<std::vector<int32_t>> taps{{}};
  for (const auto &d : geo) {
    if (!d.kernel.is_const()) return std::nullopt;
    std::vector<std::vector<int32_t>> next;
    for (const auto &t : taps)
      for (int32_t k = 0; k < d.kernel.as_const(); ++k) {
        next.push_back(t);
        next.back().push_back(k);
      }
    taps = std::move(next);
    if (static_cast<int64_t>(taps.size()) > kMostUnrolledTaps) return std::nullopt;
  }
  return taps;
}

// How many taps of the windows at `out_pos` lie inside the input, for an
// AveragePool that counts only those: per guarded axis a sum of likely
// guards (a constant in the interior), the kernel extent on the others.
Expr taps_inside(LowerContext &c, const std::vector<Window> &geo, const std::vector<Expr> &out_pos) {
  Expr count = 1;
  for (size_t i = 0; i < geo.size(); ++i) {
    const int32_t kernel = static_cast<int32_t>(geo[i].kernel.as_const());
    if (!geo[i].needs_guard()) {
      count = count * kernel;
      continue;
    }
    Expr on_axis = 0;
    for (int32_t k = 0; k < kernel; ++k) {
      Expr p = window_positions(c, {geo[i]}, {out_pos[i]}, {Expr(k)})[0];
      on_axis = on_axis + Halide::select(Halide::likely(p >= 0 && p < c.dim(geo[i].in)), 1, 0);
    }
    count = count * on_axis;
  }
  return count;
}

// A pool whose window is a handful of constant taps: one pure expression over
// them, which the generic schedule vectorizes along the output's inner axis
// and splits into tasks of rows like any elementwise kernel (no accumulator
// written and re-read per tap). The guards of padded axes are marked likely,
// so Halide splits off the border and the interior reads no clamp: a clamped
// index is a gather, a plain one a (strided) vector load. An AveragePool
// that counts only the taps inside (`count` undefined) counts them with the
// same likely guards, a constant in the interior.
void lower_unrolled_pool(LowerContext &c, const std::vector<Window> &geo, const std::vector<std::vector<int32_t>> &taps,
                         bool is_max, Halide::Type acc, Expr count) {
  const HTensor &x = c.in(0);
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  std::vector<Expr> out_pos(idx.begin() + 2, idx.end());
  const Expr neutral = is_max ? acc.min() : Halide::cast(acc, 0);
  Expr result;
  for (const auto &tap : taps) {
    std::vector<Expr> k(tap.begin(), tap.end());
    std::vector<Expr> pos = window_positions(c, geo, out_pos, k);
    std::vector<Expr> xi{idx[0], idx[1]};
    Expr inside;
    for (size_t i = 0; i < geo.size(); ++i) {
      if (!geo[i].needs_guard()) {
        xi.push_back(pos[i]);
        continue;
      }
      Expr extent = c.dim(geo[i].in);
      Expr ok = pos[i] >= 0 && pos[i] < extent;
      inside = inside.defined() ? (inside && ok) : ok;
      xi.push_back(Halide::clamp(Halide::likely(pos[i]), 0, extent - 1));
    }
    Expr value = Halide::cast(acc, x.at(xi));
    if (inside.defined()) value = Halide::select(Halide::likely(inside), value, neutral);
    result = !result.defined() ? value : is_max ? math::max(result, value) : result + value;
  }
  if (!is_max && !count.defined()) count = taps_inside(c, geo, out_pos);
  if (!is_max) result = result / Halide::cast(acc, count);
  c.define_output(0, v, result);
}

// Whether a 2-D pool of constant taps is worth doing in two passes: its
// windows share input rows (kernel height above the stride), each row's
// pass folds more than one tap.
bool separable_pool(const std::vector<Window> &geo) {
  return geo.size() == 2 && geo[0].kernel.is_const() && geo[1].kernel.is_const() &&
         geo[0].kernel.as_const() > geo[0].stride && geo[1].kernel.as_const() > 1;
}

// A 2-D pool in two passes: a stage of window rows (each input row's max or
// sum over the taps of each output column's window, StageKind::WindowRows),
// then the output's fold of those down the window's rows. Each input row's
// pass is shared by the output rows whose windows cover it (3x3 stride 2:
// 6 tap loads per output instead of 9); standalone Halide, MaxPool 3x3 s2 of
// [16,64,129,129] on one thread: 15-23 ms in one pass, 9-10 ms in two. Guards
// as in lower_unrolled_pool, per axis; a sum adds its taps in another order.
void lower_separable_pool(LowerContext &c, const std::vector<Window> &geo, bool is_max, Halide::Type acc, Expr count) {
  const HTensor &x = c.in(0);
  const Expr neutral = is_max ? acc.min() : Halide::cast(acc, 0);
  auto fold = [&](const Expr &a, const Expr &b) { return !a.defined() ? b : is_max ? math::max(a, b) : a + b; };
  // The value at `pos` on axis `w`, or the neutral value where it lies outside.
  auto guarded = [&](const Window &w, const Expr &pos, const std::function<Expr(const Expr &)> &read) {
    if (!w.needs_guard()) return read(pos);
    Expr extent = c.dim(w.in);
    Expr value = read(Halide::clamp(Halide::likely(pos), 0, extent - 1));
    return Halide::select(Halide::likely(pos >= 0 && pos < extent), value, neutral);
  };
  auto h = c.vars(4);  // n, c, input row, output column
  Expr across;
  for (int32_t k = 0; k < static_cast<int32_t>(geo[1].kernel.as_const()); ++k) {
    Expr pos = window_positions(c, {geo[1]}, {Expr(h[3])}, {Expr(k)})[0];
    across = fold(across, guarded(geo[1], pos, [&](const Expr &p) { return Halide::cast(acc, x.at({h[0], h[1], h[2], p})); }));
  }
  Func rows = c.func("window_rows");
  rows(reversed(h)) = across;
  c.add_stage(rows, StageKind::WindowRows, 4);

  auto v = c.vars(4);
  Expr result;
  for (int32_t k = 0; k < static_cast<int32_t>(geo[0].kernel.as_const()); ++k) {
    Expr pos = window_positions(c, {geo[0]}, {Expr(v[2])}, {Expr(k)})[0];
    result = fold(result, guarded(geo[0], pos, [&](const Expr &p) { return rows(v[3], p, v[1], v[0]); }));
  }
  if (!is_max && !count.defined()) count = taps_inside(c, geo, {Expr(v[2]), Expr(v[3])});
  if (!is_max) result = result / Halide::cast(acc, count);
  c.define_output(0, v, result);
}

void lower_pool(LowerContext &c) {
  const HTensor &x = c.in(0);
  bool is_max = c.node().op_type == "MaxPool";
  auto geo = pool_geometry(c.attrs(), c.node().where(), x.shape);
  Halide::Type acc = is_max ? halide_type(x.dtype) : acc_type(x.dtype);
  auto taps = unrolled_taps(geo);
  const bool unroll = taps && !(is_max && c.has_output(1));

  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  std::vector<Expr> out_pos(idx.begin() + 2, idx.end());
  std::vector<Dim> extents;
  for (const auto &d : geo) extents.push_back(d.kernel);
  Halide::RDom r = make_rdom(c, extents);
  WindowRead rd = window_read(c, geo, out_pos, rdom_vars(r));
  std::vector<Expr> xi{idx[0], idx[1]};
  xi.insert(xi.end(), rd.spatial.begin(), rd.spatial.end());
  Expr value = Halide::cast(acc, x.at(xi));
  Expr neutral = is_max ? acc.min() : Halide::cast(acc, 0);
  if (rd.inside.defined()) value = Halide::select(rd.inside, value, neutral);
  if (is_max && c.has_output(1)) return lower_max_pool_with_indices(c, v, xi, value, neutral);

  // count_include_pad counts the padded extent, not the ceil_mode overhang.
  bool include_pad = c.attrs().get_int("count_include_pad", 0) != 0;
  Expr count = 1;
  for (size_t i = 0; i < geo.size(); ++i) {
    const Window &d = geo[i];
    Expr pad_begin = c.dim(d.pad_begin), in = c.dim(d.in);
    Expr base = out_pos[i] * static_cast<int32_t>(d.stride) - pad_begin;
    Expr lo = include_pad ? -pad_begin : Expr(0);
    Expr hi = include_pad ? in + c.dim(d.pad_end) : in;
    count = count * positions_in(base, c.dim(d.kernel), static_cast<int32_t>(d.dilation), lo, hi);
  }
  if (unroll && separable_pool(geo)) return lower_separable_pool(c, geo, is_max, acc, include_pad ? count : Expr());
  if (unroll) return lower_unrolled_pool(c, geo, *taps, is_max, acc, include_pad ? count : Expr());
  define_accumulated(c, v, acc, is_max ? "max" : "sum", [&](Func &f, const std::vector<Var> &lhs) {
    f(lhs) = neutral;
    f(lhs) = is_max ? math::max(f(lhs), value) : f(lhs) + value;
    if (!is_max) f(lhs) = f(lhs) / Halide::cast(acc, count);
  });
}

void infer_global_pool(InferContext &c) {
  require_spatial_input(c, 0);
  Shape out = c.shape(0);
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  c.set_output(0, c.dtype(0), out);
}

void lower_global_pool(LowerContext &c) {
  const HTensor &x = c.in(0);
  bool is_max = c.node().op_type == "GlobalMaxPool";
  Halide::Type acc = is_max ? halide_type(x.dtype) : acc_type(x.dtype);
  std::vector<Dim> spatial(x.shape.begin() + 2, x.shape.end());
  auto v = c.vars(x.rank());
  std::vector<Var> nc(v.begin(), v.begin() + 2);
  Func red = c.func(is_max ? "max" : "sum");
  auto lhs = reversed(nc);
  red(lhs) = is_max ? acc.min() : Halide::cast(acc, 0);
  std::vector<Expr> xi{nc[0], nc[1]};
  Expr count = 1;
  if (!spatial.empty()) {
    Halide::RDom r = make_rdom(c, spatial);
    for (const auto &e : rdom_vars(r)) xi.push_back(e);
    Expr value = Halide::cast(acc, x.at(xi));
    red(lhs) = is_max ? math::max(red(lhs), value) : red(lhs) + value;
    for (const auto &d : spatial) count = count * c.dim(d);
  } else {
    red(lhs) = Halide::cast(acc, x.at(xi));
  }
  c.add_stage(red, StageKind::RowReduction, 2);
  Expr result = red(lhs);
  if (!is_max) result = result / Halide::cast(acc, count);
  c.define_output(0, v, result);
}

}  // namespace

void register_conv_ops(OpRegistry &r) {
  r.add("Conv", 1, OpKind::Dot, infer_conv, lower_conv);
  for (const char *op : {"MaxPool", "AveragePool"}) r.add(op, 1, OpKind::Reduction, infer_pool, lower_pool);
  for (const char *op : {"GlobalMaxPool", "GlobalAveragePool"})
    r.add(op, 1, OpKind::Reduction, infer_global_pool, lower_global_pool);
}

}  // namespace disco
