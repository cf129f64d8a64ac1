// Resize and the deprecated Upsample: nearest, linear and cubic
// interpolation, separable over the axes, with every coordinate
// transformation mode of ONNX. The arithmetic follows ONNX's reference
// (interpolate_1d_with_x) step by step, in double as it does, so that ties in
// nearest rounding and the choice of neighbours come out the same: a source
// coordinate x maps to base = ceil(x) - 1 and ratio = x - base in (0, 1], and
// the taps sit at base (+1) for nearest/linear and base-1 .. base+2 for
// cubic; reads outside the input repeat its edge (clamped indices).
//
// Two departures from the reference, where it disagrees with PyTorch (whose
// exporter writes most Resize nodes) and ONNX Runtime:
//  - A float scale that is the float32 rounding of a fraction p/q (q up to
//    4096: 1.3f, 0.3f) is taken as p/q exactly, for the output extent
//    floor(in * p / q) and for the source coordinates (x * q / p). The
//    reference multiplies by the float's double value, a hair off p/q:
//    10 x 1.3f gave 12 rows where PyTorch and ONNX Runtime give 13, and
//    nearest at 0.3f read source column 9 for output 3 where they read 10.
//  - align_corners divides by the output length less one, as the spec's
//    length_resized and both of them do, not by in * scale less one (they
//    differ where in * scale is not whole: 1.5 x 5 gave 0, 0.615, ... for
//    PyTorch's 0, 0.667, ...).
//
// Scales and sizes are needed at compile time (required_floats /
// required_dims). With a symbolic input extent and a given scale, the output
// extent is a dim: floor(in * p / q).
#include <cmath>
#include <functional>
#include <optional>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/interpolation.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

struct Fraction {
  int64_t p = 1, q = 1;
};

struct ResizePlan {
  std::string mode = "nearest";    // nearest, linear, cubic
  std::string ctm = "half_pixel";  // coordinate_transformation_mode
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
  std::vector<Dim> out;                      // output extent per axis
  std::vector<std::optional<double>> scale;  // given scale; nullopt: out / in
  std::vector<std::optional<Fraction>> fraction;  // the given scale as p/q, where it is one (float_fraction)
  std::vector<double> roi_start, roi_end;    // per axis, for tf_crop_and_resize
};

// Whether input i is given and not an empty tensor (opset 11 passes empty
// roi / scales when unused).
bool given(const NodeContext &c, int i) {
  if (!c.has_input(i)) return false;
  const Shape &s = c.shape(i);
  return !(s.size() == 1 && c.store().canonical(s[0]).is_const(0));
}

// The first fraction p/q, q from 1 to 4096 and p the nearest numerator to
// s q, that `accept(p, q)` takes.
template <class Accept>
std::optional<Fraction> first_fraction(double s, Accept accept) {
  for (int64_t q = 1; q <= 4096; ++q) {
    int64_t p = std::llround(s * static_cast<double>(q));
    if (p >= 1 && accept(static_cast<double>(p) / static_cast<double>(q))) return Fraction{p, q};
  }
  return std::nullopt;
}

// The fraction p/q whose float32 rounding is the float scale s, if there is
// one: the scale its author wrote (header comment).
std::optional<Fraction> float_fraction(double s) {
  return first_fraction(s, [s](double r) { return static_cast<float>(r) == static_cast<float>(s); });
}

// floor(in * s) as a dim: floor(in * p / q) where s is a float fraction;
// otherwise in double for a constant extent, and for a symbolic one s must be
// close to a small fraction p/q (a float scale a hair below p/q makes exact
// multiples of q land one lower, as floor(in * s) does in double).
Dim scaled_extent(const NodeContext &c, const Dim &in0, double s) {
  if (s <= 0) c.fail("scales must be positive, got ", s);
  Dim in = c.store().canonical(in0);
  if (auto f = float_fraction(s)) return floor_div(in * f->p, Dim(f->q));
  if (in.is_const()) return Dim(static_cast<int64_t>(std::floor(static_cast<double>(in.as_const()) * s)));
  if (auto f = first_fraction(s, [s](double r) { return std::fabs(s - r) <= 1e-6 * s; })) {
    const bool below = s < static_cast<double>(f->p) / static_cast<double>(f->q);
    return below ? floor_div(in * f->p - 1, Dim(f->q)) : floor_div(in * f->p, Dim(f->q));
  }
  c.fail("scale ", s, " of symbolic extent ", in.str(), " is not a simple fraction; give sizes instead");
}

ResizePlan resize_plan(const NodeContext &c, const Shape &x) {
  const std::string &op = c.node().op_type;
  int64_t rank = static_cast<int64_t>(x.size());
  ResizePlan p;
  const auto &a = c.attrs();
  p.mode = a.get_string("mode", "nearest");
  if (p.mode == "bilinear" || p.mode == "trilinear") p.mode = "linear";  // Upsample-7 spellings
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic") c.fail("unknown mode '", p.mode, "'");
  bool legacy = op == "Upsample" || c.opset() < 11;
  if (legacy) {
    // Upsample and Resize-10 map coordinates asymmetrically and floor for nearest.
    if (p.mode == "cubic") c.fail("cubic mode needs Resize opset 11 or later");
    p.ctm = "asymmetric";
    p.nearest_mode = "floor";
  } else {
    p.ctm = a.get_string("coordinate_transformation_mode", "half_pixel");
    p.nearest_mode = a.get_string("nearest_mode", "round_prefer_floor");
    p.cubic_a = a.get_float("cubic_coeff_a", -0.75f);
    p.exclude_outside = a.get_int("exclude_outside", 0) != 0;
    p.extrapolation = a.get_float("extrapolation_value", 0.0f);
  }
  static const char *ctms[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                               "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(ctms), std::end(ctms), p.ctm) == std::end(ctms))
    c.fail("unknown coordinate_transformation_mode '", p.ctm, "'");
  static const char *nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (std::find(std::begin(nms), std::end(nms), p.nearest_mode) == std::end(nms))
    c.fail("unknown nearest_mode '", p.nearest_mode, "'");
  if (c.opset() >= 18 && a.get_int("antialias", 0) != 0) c.fail("antialias=1 is not supported");

  // Opset 18's axes name the axes that scales, sizes and roi cover.
  std::vector<int64_t> axes;
  if (c.opset() >= 18 && a.has("axes"))
    axes = normalize_axes(c, a.get_ints("axes"), rank);
  else
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  auto expect_len = [&](size_t n, const char *what) {
    if (n != axes.size()) c.fail(what, " has ", n, " entries for ", axes.size(), " axes");
  };

  p.out.assign(x.begin(), x.end());
  p.scale.assign(rank, 1.0);
  p.fraction.assign(rank, std::nullopt);
  int scales_in = legacy ? 1 : 2;
  bool has_sizes = !legacy && given(c, 3);
  bool has_scales = legacy || given(c, 2);
  if (has_sizes && has_scales) c.fail("give scales or sizes, not both");
  if (has_sizes) {
    auto sizes = c.required_dims(3, "sizes");
    expect_len(sizes.size(), "sizes");
    std::string policy = c.opset() >= 18 ? a.get_string("keep_aspect_ratio_policy", "stretch") : "stretch";
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        p.out[axes[i]] = sizes[i];
        p.scale[axes[i]] = std::nullopt;
      }
    } else if (policy == "not_larger" || policy == "not_smaller") {
      // One scale for all axes: the smallest (largest) of sizes / in.
      double s = policy == "not_larger" ? HUGE_VAL : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        Dim in = c.store().canonical(x[axes[i]]), sz = c.store().canonical(sizes[i]);
        if (!in.is_const() || !sz.is_const()) c.fail("keep_aspect_ratio_policy '", policy, "' needs constant extents");
        double r = static_cast<double>(sz.as_const()) / static_cast<double>(in.as_const());
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (int64_t ax : axes) {
        p.scale[ax] = s;
        p.out[ax] =
            Dim(static_cast<int64_t>(std::floor(s * static_cast<double>(c.store().canonical(x[ax]).as_const()) + 0.5)));
      }
    } else {
      c.fail("unknown keep_aspect_ratio_policy '", policy, "'");
    }
  } else if (has_scales) {
    std::vector<double> scales;
    if (op == "Upsample" && c.opset() < 9) {
      for (float f : a.get_floats("scales")) scales.push_back(f);
    } else {
      scales = c.required_floats(scales_in, "scales");
    }
    expect_len(scales.size(), "scales");
    for (size_t i = 0; i < axes.size(); ++i) {
      p.scale[axes[i]] = scales[i];
      p.fraction[axes[i]] = float_fraction(scales[i]);
      p.out[axes[i]] = scaled_extent(c, x[axes[i]], scales[i]);
    }
  } else {
    c.fail("needs scales or sizes");
  }

  if (p.ctm == "tf_crop_and_resize") {
    std::vector<double> roi = c.required_floats(1, "roi");
    if (roi.size() != 2 * axes.size()) c.fail("roi has ", roi.size(), " entries for ", axes.size(), " axes");
    p.roi_start.assign(rank, 0.0);
    p.roi_end.assign(rank, 1.0);
    for (size_t i = 0; i < axes.size(); ++i) {
      p.roi_start[axes[i]] = roi[i];
      p.roi_end[axes[i]] = roi[i + axes.size()];
    }
  }
  return p;
}

void infer_resize(InferContext &c) {
  if (c.rank(0) < 1) c.fail("X must have rank >= 1");
  ResizePlan p = resize_plan(c, c.shape(0));
  for (size_t i = 0; i < p.out.size(); ++i) {
    Dim o = c.store().canonical(p.out[i]);
    if (o.is_const() && o.as_const() < 0) c.fail("output dim ", i, " is negative (", o.as_const(), ")");
  }
  c.set_output(0, c.dtype(0), Shape(p.out.begin(), p.out.end()));
}

struct Tap {
  Expr index;   // clamped into the input
  Expr weight;  // undefined: 1
};

// One axis of the interpolation: its taps at output position `x`, and
// whether the source coordinate falls outside the crop (tf_crop_and_resize).
struct AxisTaps {
  std::vector<Tap> taps;
  Expr outside;
  bool identity = false;  // the output coordinate itself
};

Expr f64(const Expr &e) { return Halide::cast(Halide::Float(64), e); }

// The source coordinate (in double, as the reference) of output position
// `pos` along `axis`; for tf_crop_and_resize also whether it lies outside the crop.
Expr source_coordinate(LowerContext &c, const ResizePlan &p, int axis, const Dim &in_dim, const Expr &pos,
                       Expr *outside = nullptr) {
  const Dim &out_dim = p.out[axis];
  Expr x = f64(pos), in = f64(c.dim(in_dim)), out = f64(c.dim(out_dim));
  Expr scale = p.scale[axis] ? Expr(*p.scale[axis]) : out / in;
  const std::optional<Fraction> &frac = p.fraction[axis];
  // e / scale; e * q / p for a fraction, exact where the result is whole.
  auto unscale = [&](const Expr &e) {
    return frac ? e * Expr(static_cast<double>(frac->q)) / Expr(static_cast<double>(frac->p)) : e / scale;
  };
  // The reference's output_width, a float for given scales.
  Expr out_w = frac ? in * Expr(static_cast<double>(frac->p)) / Expr(static_cast<double>(frac->q)) : scale * in;
  Expr xo;
  if (p.ctm == "half_pixel")
    xo = unscale(x + Expr(0.5)) - Expr(0.5);
  else if (p.ctm == "pytorch_half_pixel")
    xo = Halide::select(out_w == Expr(1.0), Expr(-Expr(0.5)), unscale(x + Expr(0.5)) - Expr(0.5));
  else if (p.ctm == "align_corners")
    xo = Halide::select(out == Expr(1.0), Expr((0.0)), x * (in - Expr(1.0)) / (out - Expr(1.0)));
  else if (p.ctm == "asymmetric")
    xo = unscale(x);
  else if (p.ctm == "tf_half_pixel_for_nn")
    xo = unscale(x + Expr(0.5));
  else {
    double r0 = p.roi_start[axis], r1 = p.roi_end[axis];
    Expr span(r1 - r0);
    xo = Halide::select(out_w == Expr(1.0), span * (in - Expr(1.0)) / Expr(2.0),
                        x * span * (in - Expr(1.0)) / (out_w - Expr(1.0)));
    xo = xo + Expr(r0) * (in - Expr(1.0));
    if (outside) *outside = xo < Expr(0.0) || xo > in - Expr(1.0);
  }
  return xo;
}

AxisTaps axis_taps(LowerContext &c, const ResizePlan &p, int axis, const Dim &in_dim, const Expr &pos) {
  const Dim &out_dim = p.out[axis];
  AxisTaps t;
  bool identity_ctm =
      p.ctm == "half_pixel" || p.ctm == "pytorch_half_pixel" || p.ctm == "align_corners" || p.ctm == "asymmetric";
  bool unit = p.scale[axis] ? *p.scale[axis] == 1.0 : c.store().same_dim(in_dim, out_dim);
  if (identity_ctm && unit && c.store().same_dim(in_dim, out_dim)) {
    t.taps.push_back({pos, Expr()});
    t.identity = true;
    return t;
  }
  Expr xo = source_coordinate(c, p, axis, in_dim, pos, &t.outside);
  Expr base = Halide::ceil(xo) - Expr(1.0), ratio = xo - base;
  Expr ibase = Halide::cast(Halide::Int(32), base);
  auto at = [&](int k) { return clamp_index(c, ibase + k, in_dim); };
  if (p.mode == "nearest") {
    Expr second;
    if (p.nearest_mode == "round_prefer_floor")
      second = ratio > Expr(0.5);
    else if (p.nearest_mode == "round_prefer_ceil")
      second = ratio >= Expr(0.5);
    else if (p.nearest_mode == "floor")
      second = ratio == Expr(1.0);
    else
      second = Halide::cast(Halide::Bool(), true);
    t.taps.push_back({clamp_index(c, ibase + Halide::select(second, 1, 0), in_dim), Expr()});
    return t;
  }
  std::vector<Expr> w;
  int first;
  if (p.mode == "linear") {
    w = {Expr(1.0) - ratio, ratio};
    first = 0;
  } else {
    w = cubic_coeffs(ratio, p.cubic_a);
    first = -1;
  }
  if (p.exclude_outside) {
    Expr n = c.dim(in_dim), sum = Expr((0.0));
    for (size_t k = 0; k < w.size(); ++k) {
      Expr i = ibase + (first + static_cast<int>(k));
      w[k] = Halide::select(i >= 0 && i < n, w[k], Expr((0.0)));
      sum = sum + w[k];
    }
    for (auto &wk : w) wk = wk / sum;
  }
  for (size_t k = 0; k < w.size(); ++k) t.taps.push_back({at(first + static_cast<int>(k)), w[k]});
  return t;
}

// An axis's taps as tables over its output coordinate, each a stage computed
// once per coordinate: the clamped source index of every tap ([k, q]) and
// its weight in `wt` ([k, q]), and whether the coordinate is outside the
// crop. The coordinate arithmetic (in double, as ONNX's reference) then costs
// nothing per element, and the element loop is gathers and multiply-adds.
AxisTaps tabulate(LowerContext &c, const AxisTaps &t, const Halide::Var &q, const Expr &pos, Halide::Type wt,
                  int axis) {
  const std::string name = "axis" + std::to_string(axis);
  Halide::Var k;
  Halide::Func index = c.func(name + "_index");
  Expr idx = t.taps.back().index;
  for (size_t i = t.taps.size() - 1; i-- > 0;) idx = Halide::select(k == static_cast<int>(i), t.taps[i].index, idx);
  index(k, q) = idx;
  c.add_stage(index, StageKind::Other, 2);
  Halide::Func weight;
  if (t.taps[0].weight.defined()) {
    weight = c.func(name + "_weight");
    Expr w = t.taps.back().weight;
    for (size_t i = t.taps.size() - 1; i-- > 0;) w = Halide::select(k == static_cast<int>(i), t.taps[i].weight, w);
    weight(k, q) = Halide::cast(wt, w);
    c.add_stage(weight, StageKind::Other, 2);
  }
  AxisTaps out;
  for (size_t i = 0; i < t.taps.size(); ++i)
    out.taps.push_back({index(static_cast<int>(i), pos), weight.defined() ? weight(static_cast<int>(i), pos) : Expr()});
  if (t.outside.defined()) {
    Halide::Func outside = c.func(name + "_outside");
    outside(q) = Halide::cast(Halide::UInt(8), t.outside);
    c.add_stage(outside, StageKind::Other, 1);
    out.outside = outside(pos) != 0;
  }
  return out;
}

// The inner axis's pass when its scale is a power of two s and the source
// coordinate of output x is affine within each phase x % s: half_pixel,
// pytorch_half_pixel (the same for an output of 2 or more) and asymmetric,
// without exclude_outside. Then x maps to base = x / s + b(x % s) and the
// same weights as the table path (computed in double at compile time, exact
// for a power of two), and the taps read an edge-padded copy of the rows
// (`edge`, kEdgePad values each side) without clamps: dense vector loads
// once the pass is split by s (x86 plane_pass_output). A 2x bilinear pass
// took 0.18 ns an output this way against 0.74-0.88 through the tables'
// gathers (standalone Halide, one thread). Undefined when it does not apply.
constexpr int kEdgePad = 2;  // covers cubic's taps base-1 .. base+2 with b in {-1, 0}

struct PhasedPass {
  Halide::Expr sum;
  Halide::Func edge;
  int phases = 0;
};

// The edge-padded copy of x's rows along its inner axis: kEdgePad repeated
// edge values on both sides, so taps need no clamps.
Halide::Func edge_padded(LowerContext &c, const HTensor &x, const std::vector<Halide::Var> &v) {
  const int a = x.rank() - 1;
  Halide::Func edge = c.func("axis" + std::to_string(a) + "_edge");
  std::vector<Expr> at = c.exprs(v);
  at[a] = clamp_index(c, v[a] - kEdgePad, x.shape[a]);
  edge(reversed(v)) = x.at(at);
  return edge;
}

// Linear align_corners with an integer scale s >= 2: output x = s m + q has
// the source coordinate x (in - 1) / (s in - 1) = m + q r - m d, with
// q r and m d in [0, 1) (r = (in - 1) / (s in - 1), d = (s - 1) / (s in - 1)),
// so its first tap is m - 1 or m, but which one and the weights drift along
// the row: not affine per phase. Per (m, q), two tables hold whether the
// first tap is m (`second`) and the weights; the pass reads the three
// candidate taps m - 1, m, m + 1 as dense loads of the edge-padded rows and
// selects two: the same products and sum as the table path, bit for bit,
// without its gathers. The tables' coordinates are the table path's (double).
PhasedPass align_corners_pass(LowerContext &c, const ResizePlan &p, const HTensor &x,
                              const std::vector<Halide::Var> &v, Halide::Type wt) {
  PhasedPass out;
  const int a = x.rank() - 1;
  const double scale = *p.scale[a];
  if (p.mode != "linear" || scale < 2 || scale > 16 || scale != std::floor(scale)) return out;
  const int s = static_cast<int>(scale);
  Halide::Var m, j;  // j: the phase q, plus s for the second weight
  const std::string name = "axis" + std::to_string(a);
  const Expr q = j % s;
  const Expr xo = source_coordinate(c, p, a, x.shape[a], m * s + q);
  const Expr base = Halide::ceil(xo) - Expr(1.0), ratio = xo - base;
  Halide::Func second = c.func(name + "_second");
  second(m, j) = Halide::clamp(Halide::cast(Halide::Int(32), base) - (m - 1), 0, 1);
  c.add_stage(second, StageKind::Other, 2);
  Halide::Func weight = c.func(name + "_weight2");
  weight(m, j) = Halide::cast(wt, Halide::select(j < s, Expr(1.0) - ratio, ratio));
  c.add_stage(weight, StageKind::Other, 2);

  out.edge = edge_padded(c, x, v);
  const Expr phase = v[a] % s, mo = v[a] / s;
  auto tap = [&](int k) {  // the input at m - 1 + k
    std::vector<Expr> idx = c.exprs(v);
    idx[a] = mo + (kEdgePad - 1 + k);
    return Halide::cast(wt, out.edge(reversed(idx)));
  };
  const Expr is_m = second(mo, phase) != 0;
  out.sum = Halide::select(is_m, tap(1), tap(0)) * weight(mo, phase) +
            Halide::select(is_m, tap(2), tap(1)) * weight(mo, phase + s);
  out.phases = s;
  return out;
}

PhasedPass phased_inner_pass(LowerContext &c, const ResizePlan &p, const HTensor &x, const std::vector<Halide::Var> &v,
                             Halide::Type wt) {
  PhasedPass out;
  const int a = x.rank() - 1;
  if (p.mode == "nearest" || p.exclude_outside || !p.scale[a]) return out;
  if (p.ctm == "align_corners") return align_corners_pass(c, p, x, v, wt);
  if (p.ctm != "half_pixel" && p.ctm != "pytorch_half_pixel" && p.ctm != "asymmetric") return out;
  const double scale = *p.scale[a];
  if (scale < 2 || scale > 16 || scale != std::floor(scale)) return out;
  const int s = static_cast<int>(scale);
  if ((s & (s - 1)) != 0) return out;  // powers of two: the table path's double arithmetic, exactly
  // Per phase: the first tap's offset from x / s, and the weights.
  const int first = p.mode == "linear" ? 0 : -1;
  std::vector<int> offset(s);
  std::vector<std::vector<Expr>> weights(s);
  for (int q = 0; q < s; ++q) {
    const double src = p.ctm == "asymmetric" ? q / scale : (q + 0.5) / scale - 0.5;
    const double base = std::ceil(src) - 1, ratio = src - base;
    offset[q] = static_cast<int>(base) + first + kEdgePad;
    if (p.mode == "linear")
      weights[q] = {Expr(1.0 - ratio), Expr(ratio)};
    else
      weights[q] = cubic_coeffs(Expr(ratio), p.cubic_a);
  }
  const Halide::Expr phase = v[a] % s, xo = v[a] / s;
  auto by_phase = [&](const std::function<Expr(int)> &value) {
    Expr e = value(s - 1);
    for (int q = s - 1; q-- > 0;) e = Halide::select(phase == q, value(q), e);
    return e;
  };
  out.edge = edge_padded(c, x, v);
  for (size_t k = 0; k < weights[0].size(); ++k) {
    std::vector<Expr> idx = c.exprs(v);
    idx[a] = xo + by_phase([&](int q) { return Expr(offset[q] + static_cast<int>(k)); });
    Expr w = by_phase([&](int q) { return Halide::cast(wt, weights[q][k]); });
    Expr term = Halide::cast(wt, out.edge(reversed(idx))) * w;
    out.sum = out.sum.defined() ? out.sum + term : term;
  }
  out.phases = s;
  return out;
}

void lower_resize(LowerContext &c) {
  const HTensor &x = c.in(0);
  ResizePlan p = resize_plan(c, x.shape);
  auto v = c.vars(x.rank());
  // Weights in float for float tensors (within ONNX's rtol of the double
  // reference); in double for integer ones, which round the result.
  const bool float_data = halide_type(x.dtype).is_float() && x.dtype != DType::F64;
  const Halide::Type wt = float_data ? Halide::Float(32) : Halide::Float(64);
  std::vector<AxisTaps> axes;
  Expr outside;
  for (int a = 0; a < x.rank(); ++a) {
    Halide::Var q = c.vars(1)[0];
    AxisTaps t = axis_taps(c, p, a, x.shape[a], q);
    axes.push_back(t.identity ? AxisTaps{{{v[a], Expr()}}, Expr(), true} : tabulate(c, t, q, v[a], wt, a));
    if (axes.back().outside.defined())
      outside = outside.defined() ? (outside || axes.back().outside) : axes.back().outside;
  }
  // Weighted modes separably, innermost resized axis first: each is a stage
  // over the previous one's result, which it reads at its taps. Only the
  // innermost axis gathers (along rows); an outer axis's taps are whole rows,
  // read densely. A 2x bilinear upsample gathers a quarter as much as it would
  // over the product of the taps (1.96 against 7.8 ms at 1x64x80x80, one
  // thread). Nearest reads one tap per axis: one pass, one gather.
  std::vector<int> resized;
  for (int a = x.rank() - 1; a >= 0; --a)
    if (!axes[a].identity) resized.push_back(a);
  std::vector<Expr> here = c.exprs(v);
  Expr sum;
  if (p.mode == "nearest") {
    for (int a : resized) here[a] = axes[a].taps[0].index;
    sum = x.at(here);
  } else {
    std::function<Expr(const std::vector<Expr> &)> read = [&](const std::vector<Expr> &i) { return x.at(i); };
    sum = read(here);
    // A 2-D map's first pass (its columns) then its rows: per plane (StageKind::PlanePass).
    const bool plane = x.rank() == 4 && resized.size() == 2 && resized[0] == 3 && resized[1] == 2;
    for (size_t j = 0; j < resized.size(); ++j) {
      const int a = resized[j];
      const PhasedPass phased = plane && j == 0 ? phased_inner_pass(c, p, x, v, wt) : PhasedPass{};
      sum = phased.sum;
      if (!sum.defined())
        for (const Tap &t : axes[a].taps) {
          std::vector<Expr> idx = here;
          idx[a] = t.index;
          Expr term = Halide::cast(wt, read(idx)) * t.weight;
          sum = sum.defined() ? sum + term : term;
        }
      if (j + 1 == resized.size()) break;
      Halide::Func pass = c.func("axis" + std::to_string(a));
      pass(reversed(v)) = sum;
      Stage &stage = c.add_stage(pass, plane ? StageKind::PlanePass : StageKind::Other, x.rank());
      stage.phases = phased.phases;
      stage.edge = phased.edge;
      read = [pass](const std::vector<Expr> &i) { return pass(reversed(i)); };
    }
  }
  Halide::Type ty = halide_type(x.dtype);
  if (sum.type() != ty && !ty.is_float()) sum = Halide::round(sum);
  if (outside.defined()) sum = Halide::select(outside, Halide::cast(sum.type(), Expr(p.extrapolation)), sum);
  c.define_output(0, v, sum);
}

}  // namespace

void register_resize_ops(OpRegistry &r) {
  r.add("Resize", 10, OpKind::Opaque, infer_resize, lower_resize);
  r.add({"", "Upsample", 7, 10, OpKind::Opaque, infer_resize, lower_resize});
}

}  // namespace disco
