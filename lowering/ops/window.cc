#include "lowering/ops/window.h"

#include "lowering/ops/op_helpers.h"
#include "lowering/weight_layout.h"

namespace disco {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

std::vector<int64_t> positive_ints(const AttrReader &a, const std::string &where, const std::string &name, size_t n) {
  auto v = a.get_ints_opt(name).value_or(std::vector<int64_t>(n, 1));
  if (v.size() != n) fail(where, ": attribute '", name, "' has ", v.size(), " values for ", n, " spatial dims");
  for (auto x : v)
    if (x < 1) fail(where, ": attribute '", name, "' must be positive, got ", x);
  return v;
}

// Window geometry from the attributes every windowed op shares: strides,
// dilations, pads and auto_pad. `x` is the [N, C, spatial...] input shape and
// `kernel` the spatial kernel extents. Used by inference and lowering alike.
std::vector<Window> window_geometry(const AttrReader &a, const std::string &where, const Shape &x,
                                    const std::vector<Dim> &kernel, bool ceil_mode) {
  size_t n = kernel.size();
  auto strides = positive_ints(a, where, "strides", n);
  auto dilations = positive_ints(a, where, "dilations", n);
  std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  // Explicit pads are ignored with any other auto_pad, as onnxruntime does.
  std::vector<int64_t> pads(2 * n, 0);
  if (auto_pad == "NOTSET") {
    pads = a.get_ints_opt("pads").value_or(pads);
    if (pads.size() != 2 * n) fail(where, ": attribute 'pads' has ", pads.size(), " values, expected ", 2 * n);
    for (auto p : pads)
      if (p < 0) fail(where, ": negative pads are not supported, got ", p);
  } else if (auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    fail(where, ": unknown auto_pad '", auto_pad, "'");
  }
  std::vector<Window> w(n);
  for (size_t i = 0; i < n; ++i) {
    Window &d = w[i];
    d.in = x[i + 2];
    d.kernel = kernel[i];
    d.stride = strides[i];
    d.dilation = dilations[i];
    Dim span = d.dilation * (d.kernel - 1) + 1;  // the window's extent in the input
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      d.out = ceil_div(d.in, d.stride);
      Dim total = max(Dim(0), (d.out - 1) * d.stride + span - d.in);
      Dim half = floor_div(total, 2);
      d.pad_begin = auto_pad == "SAME_UPPER" ? half : total - half;
      d.pad_end = total - d.pad_begin;
      continue;
    }
    d.pad_begin = pads[i];
    d.pad_end = pads[i + n];
    Dim room = d.in + d.pad_begin + d.pad_end - span;
    if (!ceil_mode) {
      d.out = floor_div(room, d.stride) + 1;
      continue;
    }
    // The last window must start inside the input or the leading padding.
    d.out = min(ceil_div(room, d.stride) + 1, floor_div(d.in + d.pad_begin - 1, d.stride) + 1);
    d.overhang = !(d.out == floor_div(room, d.stride) + 1);
  }
  return w;
}

// Output extents below 1 are errors now when constant, at run time otherwise.
void check_outputs_positive(InferContext &c, const std::vector<Window> &w) {
  for (size_t i = 0; i < w.size(); ++i) {
    Dim out = c.store().canonical(w[i].out);
    std::string what = "output spatial dim " + std::to_string(i) + " (" + out.str() + ") must be >= 1; input extent " +
                       w[i].in.str() + " is too small for the window";
    if (out.is_const()) {
      if (out.as_const() < 1) c.fail(what, ", got ", out.as_const());
      continue;
    }
    c.store().add_check({RuntimeCheck::AtLeast, out, 1, c.where() + ": " + what});
  }
}

Shape windowed_shape(const Dim &n, const Dim &channels, const std::vector<Window> &w) {
  Shape s{n, channels};
  for (const auto &d : w) s.push_back(d.out);
  return s;
}

void require_spatial_input(InferContext &c, int min_spatial) {
  if (c.rank(0) < 2 + min_spatial)
    c.fail("input must be [N, C, spatial...] with at least ", min_spatial, " spatial dim(s), got ",
           shape_str(c.shape(0)));
}

std::vector<Expr> window_positions(LowerContext &c, const std::vector<Window> &w, const std::vector<Expr> &out,
                                   const std::vector<Expr> &k) {
  std::vector<Expr> pos;
  for (size_t i = 0; i < w.size(); ++i)
    pos.push_back(out[i] * static_cast<int32_t>(w[i].stride) + k[i] * static_cast<int32_t>(w[i].dilation) -
                  c.dim(w[i].pad_begin));
  return pos;
}

WindowRead guarded_read(LowerContext &c, const std::vector<Window> &w, const std::vector<Expr> &pos, bool every_axis) {
  WindowRead r;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!w[i].needs_guard() && !every_axis) {
      r.spatial.push_back(pos[i]);
      continue;
    }
    Expr extent = c.dim(w[i].in);
    Expr ok = pos[i] >= 0 && pos[i] < extent;
    r.inside = r.inside.defined() ? (r.inside && ok) : ok;
    r.spatial.push_back(Halide::clamp(pos[i], 0, extent - 1));
  }
  return r;
}

WindowRead window_read(LowerContext &c, const std::vector<Window> &w, const std::vector<Expr> &out,
                       const std::vector<Expr> &k) {
  return guarded_read(c, w, window_positions(c, w, out, k), false);
}

// Output 0 over `v` as an accumulator Func that `build` defines (a pure init
// and updates writing exactly `v`). It is the output itself when the output
// has the accumulator's type and `stage` is false; otherwise it is a
// materialized stage, cast by a pure output Func.
void define_accumulated(LowerContext &c, const std::vector<Var> &v, Halide::Type acc, const std::string &name,
                        const std::function<void(Func &, const std::vector<Var> &lhs)> &build, bool stage) {
  bool direct = acc == halide_type(c.out_dtype(0)) && !stage;
  Func f = c.func(direct ? "out0" : name);
  auto lhs = reversed(v);
  build(f, lhs);
  if (direct) {
    c.set_output(0, f);
    return;
  }
  c.add_stage(f, StageKind::Reduction, static_cast<int>(v.size()));
  c.define_output(0, v, f(lhs));
}

SumDomain output_domain(LowerContext &c, const std::vector<Var> &v) { return {reversed(v), c.exprs(v), false}; }

SumDomain flat_domain(LowerContext &c, const std::vector<Var> &v) {
  const Shape &out = c.out_shape(0);
  Var s("s");
  // The last spatial axis varies fastest; the first takes what is left.
  std::vector<Expr> pos(out.size() - 2);
  Expr rest = s;
  for (size_t i = pos.size(); i-- > 1;) {
    Expr extent = c.dim(out[i + 2]);
    pos[i] = rest % extent;
    rest = rest / extent;
  }
  pos[0] = rest;
  std::vector<Expr> idx{v[0], v[1]};
  idx.insert(idx.end(), pos.begin(), pos.end());
  return {{s, v[1], v[0]}, idx, true};
}

void define_sum_stage(LowerContext &c, const std::vector<Var> &v, const SumDomain &d, const std::string &name,
                      const std::function<void(Func &sum)> &build) {
  Func f = c.func(name);
  build(f);
  c.add_stage(f, StageKind::Reduction, static_cast<int>(d.lhs.size()));
  if (!d.flat) {
    c.define_output(0, v, f(d.lhs));
    return;
  }
  const Shape &out = c.out_shape(0);
  Expr s = v[2];
  for (size_t i = 3; i < v.size(); ++i) s = s * c.dim(out[i]) + v[i];
  c.define_output(0, v, f(s, v[1], v[0]));
}

// ---- Conv-like ops -----------------------------------------------------------

namespace {

std::vector<Window> conv_geometry(const AttrReader &a, const std::string &where, const Shape &x, const Shape &w) {
  return window_geometry(a, where, x, {w.begin() + 2, w.end()}, false);
}

}  // namespace

int64_t check_conv_weights(InferContext &c, const Shape &x, const Shape &w) {
  if (w.size() != x.size()) c.fail("W ", shape_str(w), " must have the rank of X ", shape_str(x));
  int64_t group = c.attrs().get_int("group", 1);
  if (group < 1) c.fail("group must be positive, got ", group);
  if (auto ks = c.attrs().get_ints_opt("kernel_shape")) {
    if (ks->size() != w.size() - 2)
      c.fail("kernel_shape has ", ks->size(), " values for ", w.size() - 2, " spatial dims");
    for (size_t i = 0; i < ks->size(); ++i)
      c.require_equal(w[i + 2], (*ks)[i],
                      "kernel_shape[" + std::to_string(i) + "] must match W dim " + std::to_string(i + 2));
  }
  return group;
}

void require_divisible_by_group(InferContext &c, const Dim &channels, int64_t group, const std::string &what) {
  Dim ch = c.store().canonical(channels);
  if (ch.is_const() && ch.as_const() % group != 0) c.fail(what, " ", ch.as_const(), " not divisible by group ", group);
  if (!ch.is_const() && group > 1)
    c.store().add_check({RuntimeCheck::Divisible, ch, group, c.where() + ": " + what + " must be divisible by group"});
}

Shape infer_conv_shape(InferContext &c, const ConvInputs &in) {
  require_spatial_input(c, 1);  // X is input 0 in every Conv-like op
  const Shape &x = c.shape(in.x), w = conv_weight_shape(c.attrs(), c.shape(in.w));
  const int64_t group = check_conv_weights(c, x, w);
  c.require_equal(x[1], w[1] * group,
                  "input channels X dim 1 must equal W dim 1 * group (" + std::to_string(group) + ")");
  require_divisible_by_group(c, w[0], group, "output channels");
  if (in.bias >= 0 && c.has_input(in.bias)) {
    if (c.rank(in.bias) != 1) c.fail("bias must be 1-D, got ", shape_str(c.shape(in.bias)));
    c.require_equal(c.shape(in.bias)[0], w[0], "bias length must equal the output channels (W dim 0)");
  }
  auto geo = conv_geometry(c.attrs(), c.where(), x, w);
  check_outputs_positive(c, geo);
  return windowed_shape(x[0], w[0], geo);
}

void define_conv_sum(LowerContext &c, const ConvInputs &in, Halide::Type acc, const ConvRead &read_x,
                     const ConvRead &read_w, const Expr &init, Func &f, const SumDomain &d) {
  const HTensor &x = c.in(in.x);
  const Shape w_shape = conv_weight_shape(c.attrs(), c.in(in.w).shape);
  const bool channels_last = has_channels_last_weight(c.attrs()) && w_shape.size() >= 3;
  int64_t group = c.attrs().get_int("group", 1);
  auto geo = conv_geometry(c.attrs(), c.node().where(), x.shape, w_shape);
  const std::vector<Expr> &idx = d.idx;
  Expr batch = idx[0], m = idx[1];
  std::vector<Expr> out_pos(idx.begin() + 2, idx.end());

  std::vector<Dim> extents{w_shape[1]};
  for (const auto &d : geo) extents.push_back(d.kernel);
  Halide::RDom r = make_rdom(c, extents);
  auto rv = rdom_vars(r);
  Expr ci = rv[0];
  std::vector<Expr> k(rv.begin() + 1, rv.end());

  // With groups, output channel m reads input channels of group m / (M / group).
  Expr channel = ci;
  if (group > 1) channel = m / (c.dim(w_shape[0]) / static_cast<int32_t>(group)) * c.dim(w_shape[1]) + ci;
  std::vector<Expr> wi{m, ci};
  wi.insert(wi.end(), k.begin(), k.end());
  if (channels_last) wi = channels_last_order(wi, 0);  // [ci, k..., m]
  Expr term;
  if (acc.is_float()) {
    // X over padded coordinates as a ConvInput stage: the sum's reads carry
    // no select, and a schedule can copy a task's rows of it once.
    std::vector<Var> pv = c.vars(x.rank());
    std::vector<Expr> pos(pv.begin() + 2, pv.end());
    // The conv template reads a channels-last Conv's input only within the
    // windows (its tiles of positions never pass the output); the other
    // template reads whole vectors of width past them, and zeros there.
    WindowRead whole = guarded_read(c, geo, pos, /*every_axis=*/!channels_last);
    std::vector<Expr> xi{pv[0], pv[1]};
    xi.insert(xi.end(), whole.spatial.begin(), whole.spatial.end());
    Expr value = read_x(xi);
    if (whole.inside.defined()) value = Halide::select(whole.inside, value, Halide::cast(acc, 0));
    Func padded = c.func("conv_in");
    padded(reversed(pv)) = value;
    c.add_stage(padded, StageKind::ConvInput, x.rank()).channels_last_weights = channels_last;
    std::vector<Expr> at{batch, channel};
    for (const Expr &e : window_positions(c, geo, out_pos, k)) at.push_back(e);
    term = padded(reversed(at)) * read_w(wi);
  } else {
    WindowRead rd = window_read(c, geo, out_pos, k);
    std::vector<Expr> xi{batch, channel};
    xi.insert(xi.end(), rd.spatial.begin(), rd.spatial.end());
    term = read_x(xi) * read_w(wi);
    if (rd.inside.defined()) term = Halide::select(rd.inside, term, Halide::cast(acc, 0));
  }
  f(d.lhs) = init;
  f(d.lhs) += term;
}

}  // namespace disco
