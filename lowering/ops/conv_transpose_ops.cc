// ConvTranspose: the gradient of Conv with respect to its input. Each output
// position gathers the input positions whose strided, dilated kernel window
// covers it (a gather rather than Conv's scatter, so that every output
// element is one reduction). X is [N, C, in...], W [C, M / group, kernel...],
// the output [N, M, out...]; extents follow ONNX's output_shape / pads /
// output_padding / auto_pad rules, symbolically.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"
#include "lowering/ops/window.h"
#include "lowering/weight_layout.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// One spatial axis: output position o is full-result position o + pad_begin,
// where the full result has extent stride * (in - 1) + output_padding + span.
struct TAxis {
  Dim in, kernel, pad_begin, out;
  int64_t stride = 1, dilation = 1;
};

std::vector<TAxis> transpose_geometry(const AttrReader &a, const std::string &where, const Shape &x, const Shape &w) {
  size_t n = x.size() - 2;
  auto strides = positive_ints(a, where, "strides", n);
  auto dilations = positive_ints(a, where, "dilations", n);
  auto out_pad = a.get_ints_opt("output_padding").value_or(std::vector<int64_t>(n, 0));
  if (out_pad.size() != n) fail(where, ": output_padding has ", out_pad.size(), " values for ", n, " spatial dims");
  std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    fail(where, ": unknown auto_pad '", auto_pad, "'");
  auto out_shape = a.get_ints_opt("output_shape");
  // output_shape may also list N and C; only the spatial extents count.
  if (out_shape && out_shape->size() == n + 2) out_shape->erase(out_shape->begin(), out_shape->begin() + 2);
  if (out_shape && out_shape->size() != n)
    fail(where, ": output_shape has ", out_shape->size(), " values for ", n, " spatial dims");
  std::vector<int64_t> pads(2 * n, 0);
  if (auto_pad == "NOTSET" && !out_shape) {
    pads = a.get_ints_opt("pads").value_or(pads);
    if (pads.size() != 2 * n) fail(where, ": attribute 'pads' has ", pads.size(), " values, expected ", 2 * n);
  }
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  std::vector<TAxis> axes(n);
  for (size_t i = 0; i < n; ++i) {
    TAxis &t = axes[i];
    t.in = x[i + 2];
    t.kernel = w[i + 2];
    t.stride = strides[i];
    t.dilation = dilations[i];
    Dim full = t.stride * (t.in - 1) + out_pad[i] + t.dilation * (t.kernel - 1) + 1;
    if (out_shape || same) {
      // The padding that crops the full result to the requested extent; the
      // odd unit goes to the end for SAME_UPPER, to the start otherwise.
      t.out = out_shape ? Dim((*out_shape)[i]) : t.in * t.stride;
      Dim total = full - t.out;
      Dim half = floor_div(total, 2);
      t.pad_begin = auto_pad == "SAME_UPPER" ? half : total - half;
      continue;
    }
    t.pad_begin = pads[i];
    t.out = full - pads[i] - pads[i + n];
  }
  return axes;
}

void infer_conv_transpose(InferContext &c) {
  require_spatial_input(c, 1);
  const Shape &x = c.shape(0), w = conv_weight_shape(c.attrs(), c.shape(1), 1);
  if (!dtype_is_float(c.dtype(0)) || c.dtype(0) != c.dtype(1)) c.fail("X and W must be float tensors of one dtype");
  const int64_t group = check_conv_weights(c, x, w);
  c.require_equal(w[0], x[1], "W dim 0 must equal the input channels (X dim 1)");
  require_divisible_by_group(c, x[1], group, "input channels");
  Dim m = w[1] * group;
  if (c.has_input(2)) {
    if (c.rank(2) != 1) c.fail("B must be 1-D, got ", shape_str(c.shape(2)));
    c.require_equal(c.shape(2)[0], m, "B length must equal the output channels (W dim 1 * group)");
  }
  Shape out{x[0], m};
  auto geo = transpose_geometry(c.attrs(), c.where(), x, w);
  for (size_t i = 0; i < geo.size(); ++i) {
    Dim o = c.store().canonical(geo[i].out);
    std::string what = "output spatial dim " + std::to_string(i) + " (" + o.str() + ") must be >= 1";
    if (o.is_const() && o.as_const() < 1) c.fail(what, ", got ", o.as_const());
    if (!o.is_const()) c.store().add_check({RuntimeCheck::AtLeast, o, 1, c.where() + ": " + what});
    out.push_back(geo[i].out);
  }
  c.set_output(0, c.dtype(0), out);
}

// Kernel equal to stride on every axis, no dilation, padding or cropping, one
// group (a UNet's or FPN's 2x2 stride-2 upsampling): every output position
// takes exactly one tap per axis, k = o % s, from input position o / s. Then
// the op is a float Conv-like sum over the input channels alone, with no
// select: X read at o / s as a ConvInput stage over output coordinates, W at
// (ci, m, o % s), or (ci, o % s, m) when the host stored it channels-last
// (lowering/weight_layout.h), so the conv template schedules it.
bool phase_exact(const AttrReader &a, const std::vector<TAxis> &geo, int64_t group) {
  if (group != 1 || a.get_ints_opt("output_shape")) return false;
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  for (int64_t p : a.get_ints_opt("pads").value_or(std::vector<int64_t>{}))
    if (p != 0) return false;
  for (int64_t p : a.get_ints_opt("output_padding").value_or(std::vector<int64_t>{}))
    if (p != 0) return false;
  for (const TAxis &t : geo)
    if (t.dilation != 1 || !t.kernel.is_const(t.stride)) return false;
  return true;
}

void lower_phase_exact(LowerContext &c, const std::vector<TAxis> &geo, Halide::Type acc) {
  const HTensor &x = c.in(0), &w = c.in(1);
  const bool channels_last = has_channels_last_weight(c.attrs());
  auto v = c.vars(x.rank());
  SumDomain d = channels_last ? flat_domain(c, v) : output_domain(c, v);
  const std::vector<Expr> &idx = d.idx;
  Halide::RDom r = make_rdom(c, {x.shape[1]});
  Expr ci = r.x;
  // X at the input position under each output position.
  std::vector<Var> pv = c.vars(x.rank());
  std::vector<Expr> xi{pv[0], pv[1]};
  for (size_t i = 0; i < geo.size(); ++i) xi.push_back(pv[i + 2] / static_cast<int32_t>(geo[i].stride));
  Func up = c.func("convt_in");
  up(reversed(pv)) = Halide::cast(acc, x.at(xi));
  c.add_stage(up, StageKind::ConvInput, x.rank()).channels_last_weights = channels_last;
  std::vector<Expr> at{idx[0], ci}, wi{ci, idx[1]};
  at.insert(at.end(), idx.begin() + 2, idx.end());
  for (size_t i = 0; i < geo.size(); ++i) wi.push_back(idx[i + 2] % static_cast<int32_t>(geo[i].stride));
  if (channels_last) wi = channels_last_order(wi, 1);
  Expr init = c.has_input(2) ? Halide::cast(acc, c.in(2).at({idx[1]})) : Halide::cast(acc, 0);
  define_sum_stage(c, v, d, "convt", [&](Func &f) {
    f(d.lhs) = init;
    f(d.lhs) += up(reversed(at)) * Halide::cast(acc, w.at(wi));
  });
}

void lower_conv_transpose(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t group = c.attrs().get_int("group", 1);
  const Shape w_shape = conv_weight_shape(c.attrs(), c.in(1).shape, 1);
  auto geo = transpose_geometry(c.attrs(), c.node().where(), x.shape, w_shape);
  Halide::Type acc = acc_type(c.out_dtype(0));
  if (acc.is_float() && phase_exact(c.attrs(), geo, group)) {
    lower_phase_exact(c, geo, acc);
    return;
  }
  const HTensor &w = c.in(1);
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  Expr batch = idx[0], m = idx[1];

  // Input channels of one group, and the group of output channel m.
  Dim per_group = floor_div(x.shape[1], Dim(group));
  std::vector<Dim> extents{per_group};
  for (const auto &a : geo) extents.push_back(a.kernel);
  Halide::RDom r = make_rdom(c, extents);
  auto rv = rdom_vars(r);
  Expr mg = c.dim(w_shape[1]);
  Expr g = m / mg;
  Expr ci = g * c.dim(per_group) + rv[0];

  std::vector<Expr> xi{batch, ci}, wi{ci, m - g * mg};
  Expr inside = Halide::cast(Halide::Bool(), 1);
  for (size_t i = 0; i < geo.size(); ++i) {
    const TAxis &a = geo[i];
    Expr k = rv[i + 1];
    // The input position whose window puts kernel tap k on this output.
    Expr p = idx[i + 2] + c.dim(a.pad_begin) - k * static_cast<int32_t>(a.dilation);
    auto s = static_cast<int32_t>(a.stride);
    Expr in = c.dim(a.in);
    Expr q = s == 1 ? p : p / s;
    inside = inside && p >= 0 && q < in;
    if (s != 1) inside = inside && p % s == 0;
    xi.push_back(Halide::clamp(q, 0, in - 1));
    wi.push_back(k);
  }
  if (has_channels_last_weight(c.attrs())) wi = channels_last_order(wi, 1);
  Expr term = Halide::select(inside, Halide::cast(acc, x.at(xi)) * Halide::cast(acc, w.at(wi)), Halide::cast(acc, 0));
  Expr init = c.has_input(2) ? Halide::cast(acc, c.in(2).at({m})) : Halide::cast(acc, 0);
  define_accumulated(c, v, acc, "convt", [&](Func &f, const std::vector<Var> &lhs) {
    f(lhs) = init;
    f(lhs) += term;
  });
}

}  // namespace

void register_conv_transpose_ops(OpRegistry &r) {
  r.add("ConvTranspose", 1, OpKind::Dot, infer_conv_transpose, lower_conv_transpose);
}

}  // namespace disco
