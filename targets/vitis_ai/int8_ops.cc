// The int8 ops of int8_ops.h: the operands' checks and the outputs'
// shapes, then the engine in use (int8_engine.h). The portable engine here is
// plain C++ loops (no Halide), so that the runtime library can run regions
// on its own; disco run installs the Halide engine (int8_halide.cc).
#include "targets/vitis_ai/int8_ops.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "frontend/errors.h"
#include "targets/vitis_ai/int8_engine.h"

namespace disco::vitis_ai {

int64_t Int8Tensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Int8Tensor Int8Tensor::zeros(std::vector<int64_t> shape, int fix) {
  Int8Tensor t;
  t.shape = std::move(shape);
  t.fix = fix;
  t.data.assign(static_cast<size_t>(t.num_elements()), 0);
  return t;
}

int8_t round_shift_saturate(int64_t v, int shift) {
  const int64_t r = shift > 0 ? (v + (int64_t{1} << (shift - 1))) >> shift : v * (int64_t{1} << -shift);
  return static_cast<int8_t>(r < -128 ? -128 : r > 127 ? 127 : r);
}

int8_t quantize_value(float v, int fix) {
  const double r = std::floor(static_cast<double>(v) * std::ldexp(1.0, fix) + 0.5);
  return static_cast<int8_t>(r < -128 ? -128 : r > 127 ? 127 : r);
}

float dequantize_value(int8_t q, int fix) { return static_cast<float>(std::ldexp(static_cast<double>(q), -fix)); }

int64_t conv_out_extent(int64_t in, int64_t pad_sum, int64_t k, int64_t stride, int64_t dilation) {
  const int64_t room = in + pad_sum - dilation * (k - 1) - 1;
  return room < 0 ? 0 : room / stride + 1;
}

int64_t avg_multiplier(int64_t count) { return ((int64_t{1} << kAvgShift) + count / 2) / count; }

OutputStage output_stage(Activation act, int shift_to_out, int out_fix) {
  OutputStage s;
  s.shift = shift_to_out;
  switch (act.kind) {
    case ActKind::None: break;
    case ActKind::Relu: s.neg_mul = 0, s.lo = 0; break;
    case ActKind::Relu6:
      s.neg_mul = 0, s.lo = 0;
      s.hi = static_cast<int64_t>(std::min(127.0, std::floor(std::ldexp(6.0, out_fix))));
      break;
    case ActKind::Leaky: s.pos_mul = 256, s.neg_mul = act.leaky_num, s.shift += 8; break;
  }
  return s;
}

namespace {

// (v + 2^(s-1)) >> s for s > 0 (an arithmetic shift: rounds half up), v << -s otherwise; no saturation.
int64_t round_shift(int64_t v, int s) {
  return s > 0 ? (v + (int64_t{1} << (s - 1))) >> s : v * (int64_t{1} << -s);
}

int8_t saturate(int64_t v, int64_t lo, int64_t hi) { return static_cast<int8_t>(v < lo ? lo : v > hi ? hi : v); }

// The output stage of conv2d and add (as ActivationParams in int8_halide.cc).
struct Act {
  OutputStage s;
  Act(Activation act, int shift_to_out, int out_fix) : s(output_stage(act, shift_to_out, out_fix)) {}
  // `acc` is the int32 accumulator (wrapped as Halide's int32 arithmetic wraps).
  int8_t apply(int32_t acc) const {
    const int64_t v = static_cast<int64_t>(acc) * (acc < 0 ? s.neg_mul : s.pos_mul);
    return saturate(round_shift(v, s.shift), s.lo, s.hi);
  }
};

// The outputs o in [0, out) whose input o * stride + offset lies in [0, in): [*lo, *hi).
void valid_range(int64_t out, int64_t stride, int64_t offset, int64_t in, int64_t *lo, int64_t *hi) {
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  *lo = std::clamp<int64_t>(ceil_div(-offset, stride), 0, out);
  *hi = std::clamp<int64_t>(ceil_div(in - offset, stride), *lo, out);
}

// Per output plane: int32 accumulators (unsigned, so that overflow wraps
// like Halide's int32), the bias shifted in, then every (c, ky, kx) tap added
// over the output rows whose input pixels are inside the image (pads read 0).
void conv2d_portable(const Int8Tensor &x, const Int8Tensor &w, const Int8Tensor &bias, const ConvGeometry &geo,
                     Activation act, Int8Tensor &y) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t M = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = y.shape[2], OW = y.shape[3], m_per_group = M / geo.group;
  const int acc_fix = x.fix + w.fix;
  const Act a(act, acc_fix - y.fix, y.fix);
  std::vector<uint32_t> acc(static_cast<size_t>(OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const uint32_t b = static_cast<uint32_t>(static_cast<int32_t>(bias.data[m])) << (acc_fix - bias.fix);
      std::fill(acc.begin(), acc.end(), b);
      const int64_t c0 = (m / m_per_group) * Cg;
      for (int64_t c = 0; c < Cg; ++c) {
        const int8_t *xc = x.data.data() + ((n * C + c0 + c) * H) * W;
        for (int64_t ky = 0; ky < KH; ++ky) {
          int64_t oy0, oy1;
          valid_range(OH, geo.stride_h, ky * geo.dilation_h - geo.pad_top, H, &oy0, &oy1);
          for (int64_t kx = 0; kx < KW; ++kx) {
            const int32_t wv = w.data[((m * Cg + c) * KH + ky) * KW + kx];
            if (wv == 0) continue;
            int64_t ox0, ox1;
            const int64_t xoff = kx * geo.dilation_w - geo.pad_left;
            valid_range(OW, geo.stride_w, xoff, W, &ox0, &ox1);
            for (int64_t oy = oy0; oy < oy1; ++oy) {
              const int8_t *row = xc + (oy * geo.stride_h + ky * geo.dilation_h - geo.pad_top) * W + xoff;
              uint32_t *out = acc.data() + oy * OW;
              for (int64_t ox = ox0; ox < ox1; ++ox)
                out[ox] += static_cast<uint32_t>(static_cast<int32_t>(row[ox * geo.stride_w]) * wv);
            }
          }
        }
      }
      int8_t *dst = y.data.data() + (n * M + m) * OH * OW;
      for (int64_t i = 0; i < OH * OW; ++i) dst[i] = a.apply(static_cast<int32_t>(acc[i]));
    }
}

void pool2d_portable(const Int8Tensor &x, PoolKind kind, int64_t kh, int64_t kw, const ConvGeometry &geo, Int8Tensor &y) {
  const int64_t NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
  const int64_t mul = avg_multiplier(kh * kw);
  const int shift = kAvgShift + x.fix - y.fix;
  for (int64_t nc = 0; nc < NC; ++nc) {
    const int8_t *src = x.data.data() + nc * H * W;
    int8_t *dst = y.data.data() + nc * OH * OW;
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        int32_t mx = -128, sum = 0;  // outside the image: -128 for the max, 0 for the sum
        for (int64_t ry = 0; ry < kh; ++ry) {
          const int64_t iy = oy * geo.stride_h + ry - geo.pad_top;
          for (int64_t rx = 0; rx < kw; ++rx) {
            const int64_t ix = ox * geo.stride_w + rx - geo.pad_left;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            const int32_t v = src[iy * W + ix];
            mx = std::max(mx, v), sum += v;
          }
        }
        dst[oy * OW + ox] = kind == PoolKind::Max ? static_cast<int8_t>(mx)
                                                  : saturate(round_shift(static_cast<int64_t>(sum) * mul, shift), -128, 127);
      }
  }
}

void add_portable(const Int8Tensor &a, const Int8Tensor &b, Activation act, Int8Tensor &y) {
  const int F = std::max(a.fix, b.fix);
  const Act ac(act, F - y.fix, y.fix);
  const int sa = F - a.fix, sb = F - b.fix;
  for (size_t i = 0; i < y.data.size(); ++i)
    y.data[i] = ac.apply(static_cast<int32_t>((static_cast<uint32_t>(static_cast<int32_t>(a.data[i])) << sa) + (static_cast<uint32_t>(static_cast<int32_t>(b.data[i])) << sb)));
}

void requantize_into_portable(const Int8Tensor &x, int64_t outer, int64_t c, int64_t inner, int64_t c_off, Int8Tensor &y) {
  const int64_t C = y.num_elements() / (outer * inner);
  const int shift = x.fix - y.fix;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < c * inner; ++k)
      y.data[(o * C + c_off) * inner + k] = saturate(round_shift(x.data[o * c * inner + k], shift), -128, 127);
}

void resize_nearest_portable(const Int8Tensor &x, int64_t sh, int64_t sw, Int8Tensor &y) {
  const int64_t NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) y.data[(nc * OH + oy) * OW + ox] = x.data[(nc * H + oy / sh) * W + ox / sw];
}

std::atomic<const Int8Engine *> g_engine{nullptr};

void require_rank(const Int8Tensor &t, size_t rank, const char *op, const char *what) {
  DISCO_CHECK(t.shape.size() == rank, "vitis_ai ", op, ": ", what, " has rank ", t.shape.size(), ", expected ", rank);
  DISCO_CHECK(static_cast<int64_t>(t.data.size()) == t.num_elements(), "vitis_ai ", op, ": ", what,
              " holds ", t.data.size(), " values for its shape");
}

}  // namespace

const Int8Engine &portable_int8_engine() {
  static const Int8Engine e{"portable", conv2d_portable, pool2d_portable, add_portable, requantize_into_portable,
                            resize_nearest_portable};
  return e;
}

void set_int8_engine(const Int8Engine *engine) { g_engine.store(engine); }

const Int8Engine &int8_engine() {
  const Int8Engine *e = g_engine.load();
  return e ? *e : portable_int8_engine();
}

Int8Tensor conv2d(const Int8Tensor &x, const Int8Tensor &w, const Int8Tensor &bias, const ConvGeometry &geo,
                  Activation act, int out_fix) {
  require_rank(x, 4, "conv2d", "X");
  require_rank(w, 4, "conv2d", "W");
  require_rank(bias, 1, "conv2d", "bias");
  const int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0];
  DISCO_CHECK(geo.group >= 1 && C % geo.group == 0 && M % geo.group == 0 && w.shape[1] * geo.group == C,
              "vitis_ai conv2d: X has ", C, " channels, W [", M, ", ", w.shape[1], ", ...] and group ", geo.group,
              " do not fit");
  DISCO_CHECK(bias.shape[0] == M, "vitis_ai conv2d: bias has ", bias.shape[0], " values for ", M, " outputs");
  DISCO_CHECK(geo.stride_h >= 1 && geo.stride_w >= 1 && geo.dilation_h >= 1 && geo.dilation_w >= 1,
              "vitis_ai conv2d: strides and dilations must be positive");
  const int64_t OH = conv_out_extent(x.shape[2], geo.pad_top + geo.pad_bottom, w.shape[2], geo.stride_h, geo.dilation_h);
  const int64_t OW = conv_out_extent(x.shape[3], geo.pad_left + geo.pad_right, w.shape[3], geo.stride_w, geo.dilation_w);
  Int8Tensor y = Int8Tensor::zeros({N, M, OH, OW}, out_fix);
  if (y.data.empty()) return y;
  const int acc_fix = x.fix + w.fix;
  DISCO_CHECK(acc_fix >= bias.fix, "vitis_ai conv2d: bias fix ", bias.fix, " exceeds the accumulator's ", acc_fix);
  int8_engine().conv2d(x, w, bias, geo, act, y);
  return y;
}

Int8Tensor gemm(const Int8Tensor &a, const Int8Tensor &w, const Int8Tensor &bias, Activation act, int out_fix) {
  require_rank(a, 2, "gemm", "A");
  require_rank(w, 2, "gemm", "W");
  DISCO_CHECK(a.shape[1] == w.shape[1], "vitis_ai gemm: A has K = ", a.shape[1], ", W has ", w.shape[1]);
  // A [M, K] is a batch of M 1x1 images with K channels; W [N, K] are 1x1 kernels.
  Int8Tensor a4 = a, w4 = w;
  a4.shape = {a.shape[0], a.shape[1], 1, 1};
  w4.shape = {w.shape[0], w.shape[1], 1, 1};
  Int8Tensor y = conv2d(a4, w4, bias, ConvGeometry{}, act, out_fix);
  y.shape = {a.shape[0], w.shape[0]};
  return y;
}

Int8Tensor pool2d(const Int8Tensor &x, PoolKind kind, int64_t kh, int64_t kw, const ConvGeometry &geo, int out_fix) {
  require_rank(x, 4, "pool2d", "X");
  DISCO_CHECK(kh >= 1 && kw >= 1 && geo.stride_h >= 1 && geo.stride_w >= 1, "vitis_ai pool2d: bad window");
  const int64_t N = x.shape[0], C = x.shape[1];
  const int64_t OH = conv_out_extent(x.shape[2], geo.pad_top + geo.pad_bottom, kh, geo.stride_h, 1);
  const int64_t OW = conv_out_extent(x.shape[3], geo.pad_left + geo.pad_right, kw, geo.stride_w, 1);
  Int8Tensor y = Int8Tensor::zeros({N, C, OH, OW}, kind == PoolKind::Max ? x.fix : out_fix);
  if (y.data.empty()) return y;
  int8_engine().pool2d(x, kind, kh, kw, geo, y);
  return y;
}

Int8Tensor global_average_pool(const Int8Tensor &x, int out_fix) {
  require_rank(x, 4, "global_average_pool", "X");
  DISCO_CHECK(x.shape[2] >= 1 && x.shape[3] >= 1, "vitis_ai global_average_pool: empty image");
  ConvGeometry geo;
  return pool2d(x, PoolKind::Average, x.shape[2], x.shape[3], geo, out_fix);
}

Int8Tensor add(const Int8Tensor &a, const Int8Tensor &b, Activation act, int out_fix) {
  DISCO_CHECK(a.shape == b.shape, "vitis_ai add: the inputs' shapes differ");
  Int8Tensor y = Int8Tensor::zeros(a.shape, out_fix);
  if (y.data.empty()) return y;
  int8_engine().add(a, b, act, y);
  return y;
}

Int8Tensor concat(const std::vector<const Int8Tensor *> &xs, int axis, int out_fix) {
  DISCO_CHECK(!xs.empty(), "vitis_ai concat: no inputs");
  const std::vector<int64_t> &s0 = xs[0]->shape;
  DISCO_CHECK(axis >= 0 && axis < static_cast<int>(s0.size()), "vitis_ai concat: axis ", axis, " out of range");
  std::vector<int64_t> shape = s0;
  shape[axis] = 0;
  for (const Int8Tensor *x : xs) {
    DISCO_CHECK(x->shape.size() == s0.size(), "vitis_ai concat: the inputs' ranks differ");
    for (size_t d = 0; d < s0.size(); ++d)
      DISCO_CHECK(static_cast<int>(d) == axis || x->shape[d] == s0[d], "vitis_ai concat: inputs differ in dim ", d);
    shape[axis] += x->shape[axis];
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s0[d];
  for (size_t d = axis + 1; d < s0.size(); ++d) inner *= s0[d];
  Int8Tensor y = Int8Tensor::zeros(shape, out_fix);
  if (y.data.empty()) return y;
  const Int8Engine &e = int8_engine();
  int64_t off = 0;
  for (const Int8Tensor *x : xs) {
    const int64_t c = x->shape[axis];
    if (c > 0) e.requantize_into(*x, outer, c, inner, off, y);
    off += c;
  }
  return y;
}

Int8Tensor requantize(const Int8Tensor &x, int out_fix) {
  Int8Tensor flat = x;
  flat.shape = {x.num_elements()};
  Int8Tensor y = concat({&flat}, 0, out_fix);
  y.shape = x.shape;
  return y;
}

Int8Tensor resize_nearest(const Int8Tensor &x, int64_t scale_h, int64_t scale_w) {
  require_rank(x, 4, "resize_nearest", "X");
  DISCO_CHECK(scale_h >= 1 && scale_w >= 1, "vitis_ai resize_nearest: scales must be positive integers");
  Int8Tensor y = Int8Tensor::zeros({x.shape[0], x.shape[1], x.shape[2] * scale_h, x.shape[3] * scale_w}, x.fix);
  if (y.data.empty()) return y;
  int8_engine().resize_nearest(x, scale_h, scale_w, y);
  return y;
}

}  // namespace disco::vitis_ai
