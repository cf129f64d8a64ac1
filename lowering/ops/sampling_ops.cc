// Ops that sample an [N, C, H, W] image at data-dependent, fractional
// positions: GridSample (positions from a grid tensor) and RoiAlign (a
// regular grid of samples in each region of interest). The arithmetic follows
// onnxruntime's kernels, which ONNX's reference mirrors; every pixel read is
// clamped into the image, and reads that padding says are outside become 0.
#include <cmath>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/interpolation.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;

void require_image(InferContext &c) {
  if (c.rank(0) != 4) c.fail("X must be [N, C, H, W], got ", shape_str(c.shape(0)));
  if (!dtype_is_float(c.dtype(0))) c.fail("X must be a float tensor");
}

// ---- GridSample -------------------------------------------------------------

struct GridAttrs {
  std::string mode, padding;
  bool align_corners;
};

GridAttrs grid_attrs(const NodeContext &c) {
  GridAttrs g{c.attrs().get_string("mode", "bilinear"), c.attrs().get_string("padding_mode", "zeros"),
              c.attrs().get_int("align_corners", 0) != 0};
  // Opset 20 renamed the modes.
  if (g.mode == "linear") g.mode = "bilinear";
  if (g.mode == "cubic") g.mode = "bicubic";
  if (g.mode != "bilinear" && g.mode != "nearest" && g.mode != "bicubic") c.fail("unknown mode '", g.mode, "'");
  if (g.padding != "zeros" && g.padding != "border" && g.padding != "reflection")
    c.fail("unknown padding_mode '", g.padding, "'");
  return g;
}

void infer_grid_sample(InferContext &c) {
  require_image(c);
  grid_attrs(c);
  const Shape &x = c.shape(0), &g = c.shape(1);
  if (g.size() != 4) c.fail("grid must be [N, H_out, W_out, 2], got ", shape_str(g));
  c.require_equal(g[0], x[0], "grid dim 0 must equal the batch");
  c.require_equal(g[3], 2, "grid dim 3 must be 2");
  c.set_output(0, c.dtype(0), {x[0], x[1], g[1], g[2]});
}

// Reflects x into [lo, hi] as many times as it takes (onnxruntime's GsReflect).
Expr reflect(const Expr &x, const Expr &lo, const Expr &hi) {
  Expr range = hi - lo;
  Expr below = lo - x, above = x - hi;
  Expr safe = Halide::select(range > 0, range, Halide::cast(range.type(), 1));
  auto fold = [&](const Expr &d, const Expr &even_base, const Expr &odd_base, bool even_down) {
    Expr n = Halide::cast(Halide::Int(32), d / safe);
    Expr r = d - Halide::cast(d.type(), n) * safe;
    Expr even = even_down ? even_base - r : even_base + r;
    Expr odd = even_down ? odd_base + r : odd_base - r;
    return Halide::select(n % 2 == 0, even, odd);
  };
  Expr from_below = fold(below, lo, hi, false), from_above = fold(above, hi, lo, true);
  Expr out = Halide::select(x < lo, from_below, Halide::select(x > hi, from_above, x));
  return Halide::select(range > 0, out, lo);
}

void lower_grid_sample(LowerContext &c) {
  const HTensor &x = c.in(0), &grid = c.in(1);
  GridAttrs g = grid_attrs(c);
  Halide::Type t = acc_type(x.dtype);
  auto k = [&](double v) { return Halide::cast(t, Expr(v)); };
  auto v = c.vars(4);
  Expr n = v[0], ch = v[1];
  const Dim &hd = x.shape[2], &wd = x.shape[3];
  Expr h = Halide::cast(t, c.dim(hd)), w = Halide::cast(t, c.dim(wd));
  auto denorm = [&](const Expr &u, const Expr &len) {
    return g.align_corners ? (u + k(1)) / k(2) * (len - k(1)) : ((u + k(1)) * len - k(1)) / k(2);
  };
  Expr gx = Halide::cast(t, grid.at({n, v[2], v[3], 0})), gy = Halide::cast(t, grid.at({n, v[2], v[3], 1}));
  Expr px = denorm(gx, w), py = denorm(gy, h);
  Expr x_lo = g.align_corners ? k(0) : k(-0.5), y_lo = x_lo;
  Expr x_hi = g.align_corners ? w - k(1) : w - k(0.5), y_hi = g.align_corners ? h - k(1) : h - k(0.5);
  if (g.mode == "nearest") {
    px = Halide::round(px);  // to even on ties, as nearbyint
    py = Halide::round(py);
  }
  Expr out_of_bound = px < x_lo || px > x_hi || py < y_lo || py > y_hi;
  // Border padding clamps the sample's position, as onnxruntime does. For
  // bicubic, PyTorch's grid_sample clamps each of the 16 taps instead, so near
  // and past the border the two differ (0.19 on a 4x4 ramp; onnxruntime issue
  // #10607): disco gives onnxruntime's answer.
  if (g.padding == "border") {
    px = Halide::select(out_of_bound, Halide::clamp(px, k(0), w - k(1)), px);
    py = Halide::select(out_of_bound, Halide::clamp(py, k(0), h - k(1)), py);
  } else if (g.padding == "reflection") {
    px = Halide::select(out_of_bound, reflect(px, x_lo, x_hi), px);
    py = Halide::select(out_of_bound, reflect(py, y_lo, y_hi), py);
  }
  // The pixel at integer (r, col) under the padding mode.
  auto pixel = [&](const Expr &r0, const Expr &c0) {
    Expr r = r0, col = c0;
    Expr inside = r >= 0 && r < c.dim(hd) && col >= 0 && col < c.dim(wd);
    if (g.padding == "reflection") {
      col = Halide::cast(Halide::Int(32), reflect(Halide::cast(t, col), x_lo, x_hi));
      r = Halide::cast(Halide::Int(32), reflect(Halide::cast(t, r), y_lo, y_hi));
    }
    Expr val = Halide::cast(t, x.at({n, ch, clamp_index(c, r, hd), clamp_index(c, col, wd)}));
    return g.padding == "zeros" ? Halide::select(inside, val, k(0)) : val;
  };
  auto as_int = [](const Expr &e) { return Halide::cast(Halide::Int(32), e); };
  Expr y;
  if (g.mode == "nearest") {
    y = pixel(as_int(py), as_int(px));
  } else if (g.mode == "bilinear") {
    Expr fx = Halide::floor(px), fy = Halide::floor(py);
    Expr x1 = as_int(fx), y1 = as_int(fy);
    Expr dx1 = px - fx, dx2 = fx + k(1) - px, dy1 = py - fy, dy2 = fy + k(1) - py;
    y = dy2 * (dx2 * pixel(y1, x1) + dx1 * pixel(y1, x1 + 1)) +
        dy1 * (dx2 * pixel(y1 + 1, x1) + dx1 * pixel(y1 + 1, x1 + 1));
  } else {
    Expr fx = Halide::floor(px), fy = Halide::floor(py);
    Expr x0 = as_int(fx) - 1, y0 = as_int(fy) - 1;
    auto cx = cubic_coeffs(px - fx, -0.75), cy = cubic_coeffs(py - fy, -0.75);
    for (int i = 0; i < 4; ++i) {
      Expr row;
      for (int j = 0; j < 4; ++j) {
        Expr term = cx[j] * pixel(y0 + i, x0 + j);
        row = row.defined() ? row + term : term;
      }
      y = y.defined() ? y + cy[i] * row : cy[i] * row;
    }
  }
  c.define_output(0, v, y);
}

// ---- RoiAlign ---------------------------------------------------------------

struct RoiAttrs {
  std::string mode;
  int64_t out_h, out_w, sampling_ratio;
  float spatial_scale;
  bool half_pixel;
};

RoiAttrs roi_attrs(const NodeContext &c) {
  const auto &a = c.attrs();
  RoiAttrs r{a.get_string("mode", "avg"),    a.get_int("output_height", 1),      a.get_int("output_width", 1),
             a.get_int("sampling_ratio", 0), a.get_float("spatial_scale", 1.0f), false};
  // Opset 10 had no attribute and behaved as output_half_pixel.
  std::string ctm =
      c.opset() >= 16 ? a.get_string("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (ctm != "half_pixel" && ctm != "output_half_pixel") c.fail("unknown coordinate_transformation_mode '", ctm, "'");
  r.half_pixel = ctm == "half_pixel";
  if (r.mode != "avg" && r.mode != "max") c.fail("unknown mode '", r.mode, "'");
  if (r.out_h < 1 || r.out_w < 1) c.fail("output_height and output_width must be positive");
  if (r.sampling_ratio < 0) c.fail("sampling_ratio must be >= 0");
  return r;
}

void infer_roi_align(InferContext &c) {
  require_image(c);
  RoiAttrs r = roi_attrs(c);
  const Shape &rois = c.shape(1), &bi = c.shape(2);
  if (rois.size() != 2) c.fail("rois must be [num_rois, 4], got ", shape_str(rois));
  c.require_equal(rois[1], 4, "rois dim 1 must be 4");
  if (bi.size() != 1) c.fail("batch_indices must be 1-D");
  c.require_equal(bi[0], rois[0], "batch_indices length must equal the number of rois");
  c.set_output(0, c.dtype(0), {rois[0], c.shape(0)[1], r.out_h, r.out_w});
}

void lower_roi_align(LowerContext &c) {
  const HTensor &x = c.in(0), &rois = c.in(1), &bi = c.in(2);
  RoiAttrs a = roi_attrs(c);
  Halide::Type t = acc_type(x.dtype);
  auto k = [&](double v) { return Halide::cast(t, Expr(v)); };
  auto v = c.vars(4);
  Expr roi = v[0], ch = v[1], ph = v[2], pw = v[3];
  const Dim &hd = x.shape[2], &wd = x.shape[3];
  Expr h = Halide::cast(t, c.dim(hd)), w = Halide::cast(t, c.dim(wd));
  Expr n = clamp_index(c, Halide::cast(Halide::Int(32), bi.at({roi})), x.shape[0]);
  Expr offset = k(a.half_pixel ? 0.5 : 0.0), scale = k(a.spatial_scale);
  auto coord = [&](int i) { return Halide::cast(t, rois.at({roi, i})) * scale - offset; };
  Expr x0 = coord(0), y0 = coord(1), rw = coord(2) - x0, rh = coord(3) - y0;
  if (!a.half_pixel) {
    rw = Halide::max(rw, k(1));
    rh = Halide::max(rh, k(1));
  }
  Expr bin_h = rh / k(static_cast<double>(a.out_h)), bin_w = rw / k(static_cast<double>(a.out_w));
  // Samples per bin: the attribute, or ceil(bin extent). The adaptive count
  // is data-dependent, so the RDom spans the image extent plus one and the
  // samples past the count are masked out; a count beyond that (a region far
  // larger than the image) is capped there. An empty or inverted region
  // (possible with half_pixel, which does not clamp the size to 1) has a count
  // of 0 or less: no samples, so 0, as torchvision's aligned=True, onnxruntime
  // and the ONNX reference compute (only the divisor is at least 1).
  Expr grid_h, grid_w;
  Halide::RDom r;
  if (a.sampling_ratio > 0) {
    grid_h = grid_w = Expr(static_cast<int32_t>(a.sampling_ratio));
    r = Halide::RDom(0, grid_h, 0, grid_w);
  } else {
    grid_h = Halide::max(Halide::cast(Halide::Int(32), Halide::ceil(rh / k(static_cast<double>(a.out_h)))), 0);
    grid_w = Halide::max(Halide::cast(Halide::Int(32), Halide::ceil(rw / k(static_cast<double>(a.out_w)))), 0);
    grid_h = Halide::min(grid_h, c.dim(hd) + 1);
    grid_w = Halide::min(grid_w, c.dim(wd) + 1);
    r = Halide::RDom(0, c.dim(hd) + 1, 0, c.dim(wd) + 1);
    r.where(r.x < grid_h && r.y < grid_w);
  }
  Expr sy = y0 + Halide::cast(t, ph) * bin_h + (Halide::cast(t, r.x) + k(0.5)) * bin_h / Halide::cast(t, grid_h);
  Expr sx = x0 + Halide::cast(t, pw) * bin_w + (Halide::cast(t, r.y) + k(0.5)) * bin_w / Halide::cast(t, grid_w);
  // Bilinear weights as onnxruntime's pre_calc: 0 outside [-1, extent].
  Expr skip = sy < k(-1) || sy > h || sx < k(-1) || sx > w;
  Expr yy = Halide::max(sy, k(0)), xx = Halide::max(sx, k(0));
  Expr ylo = Halide::cast(Halide::Int(32), yy), xlo = Halide::cast(Halide::Int(32), xx);
  Expr hi_y = c.dim(hd) - 1, hi_x = c.dim(wd) - 1;
  Expr y_edge = ylo >= hi_y, x_edge = xlo >= hi_x;
  ylo = Halide::select(y_edge, hi_y, ylo);
  xlo = Halide::select(x_edge, hi_x, xlo);
  Expr yhi = Halide::select(y_edge, hi_y, ylo + 1), xhi = Halide::select(x_edge, hi_x, xlo + 1);
  yy = Halide::select(y_edge, Halide::cast(t, ylo), yy);
  xx = Halide::select(x_edge, Halide::cast(t, xlo), xx);
  Expr ly = yy - Halide::cast(t, ylo), lx = xx - Halide::cast(t, xlo), hy = k(1) - ly, hx = k(1) - lx;
  auto px = [&](const Expr &yi, const Expr &xi) {
    return Halide::cast(t, x.at({n, ch, clamp_index(c, yi, hd), clamp_index(c, xi, wd)}));
  };
  std::vector<Expr> terms = {hy * hx * px(ylo, xlo), hy * lx * px(ylo, xhi), ly * hx * px(yhi, xlo),
                             ly * lx * px(yhi, xhi)};
  Func acc = c.func(a.mode == "avg" ? "sum" : "max");
  auto lhs = reversed(v);
  if (a.mode == "avg") {
    Expr s = terms[0] + terms[1] + terms[2] + terms[3];
    acc(lhs) = k(0);
    acc(lhs) += Halide::select(skip, k(0), s);
  } else {
    // onnxruntime takes the largest weighted corner of each sample.
    Expr m = Halide::max(Halide::max(terms[0], terms[1]), Halide::max(terms[2], terms[3]));
    acc(lhs) = t.min();
    acc(lhs) = Halide::max(acc(lhs), Halide::select(skip, k(0), m));
  }
  c.add_stage(acc, StageKind::Reduction, 4);
  Expr y = acc(lhs);
  if (a.mode == "avg") y = y / Halide::cast(t, Halide::max(grid_h * grid_w, 1));
  c.define_output(0, v, y);
}

}  // namespace

void register_sampling_ops(OpRegistry &r) {
  r.add("GridSample", 16, OpKind::Opaque, infer_grid_sample, lower_grid_sample);
  r.add("RoiAlign", 10, OpKind::Opaque, infer_roi_align, lower_roi_align);
}

}  // namespace disco
