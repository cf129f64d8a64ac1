// Signal processing ops: the window functions (Hann, Hamming, Blackman), DFT,
// STFT and MelWeightMatrix. Sizes that shape the output (window size, DFT
// length, frame step and length) must be known at compile time, as dims: they
// come through required_dims / required_ints. Transforms sum in float64 with
// the angle reduced modulo the length first, so that long signals keep their
// precision; complex values are [..., 2] (real, imaginary) tensors.
#include <cmath>

#include "frontend/checked_size.h"
#include "lowering/constant_folding.h"
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

const Halide::Type kF64 = Halide::Float(64);

DType output_datatype(const NodeContext &c) {
  DType t = dtype_from_onnx(static_cast<int>(c.attrs().get_int("output_datatype", 1)));
  if (!dtype_is_float(t)) c.fail("output_datatype must name a float type");
  return t;
}

// ---- windows ---------------------------------------------------------------

Dim window_size(const NodeContext &c) {
  auto v = c.required_dims(0, "the window size");
  if (v.size() != 1) c.fail("size must be a scalar");
  return v[0];
}

void infer_window(InferContext &c) {
  Dim n = c.store().canonical(window_size(c));
  if (n.is_const() && n.as_const() < 0) c.fail("size must be >= 0, got ", n.as_const());
  c.set_output(0, output_datatype(c), {n});
}

// A periodic window of size N is the symmetric window of size N + 1 without
// its last element: the cosines' period is N, not N - 1.
void lower_window(LowerContext &c) {
  auto v = c.vars(1);
  Expr n = Halide::cast(kF64, v[0]);
  Expr size = Halide::cast(kF64, c.dim(window_size(c)));
  Expr period = c.attrs().get_int("periodic", 1) != 0 ? size : size - 1;
  Expr a = Expr(2 * M_PI) * n / Halide::max(period, Expr(1.0));
  const std::string &op = c.node().op_type;
  Expr y;
  if (op == "HannWindow")
    y = Expr(0.5) - Expr(0.5) * math::cos(a);
  else if (op == "HammingWindow")
    y = Expr(25.0 / 46.0) - Expr(21.0 / 46.0) * math::cos(a);
  else
    y = Expr(0.42) - Expr(0.5) * math::cos(a) + Expr(0.08) * math::cos(2 * a);
  c.define_output(0, v, y);
}

// ---- DFT / STFT shared -----------------------------------------------------

// exp(-+ 2 pi i k n / len) with k * n reduced modulo len, as (cos, sin).
std::pair<Expr, Expr> twiddle(const Expr &k, const Expr &n, const Expr &len) {
  Expr l64 = Halide::cast(Halide::Int(64), len);
  Expr kn = (Halide::cast(Halide::Int(64), k) * Halide::cast(Halide::Int(64), n)) % Halide::max(l64, 1);
  Expr a = Expr(2 * M_PI) * Halide::cast(kF64, kn) / Halide::cast(kF64, len);
  return {math::cos(a), math::sin(a)};
}

// The real and imaginary part of a [..., 1 or 2] tensor at `idx` (without the
// last index); a real tensor's imaginary part is 0 (decided at run time when
// the last dim is symbolic).
std::pair<Expr, Expr> complex_read(LowerContext &c, const HTensor &x, std::vector<Expr> idx) {
  Dim last = c.store().canonical(x.shape.back());
  idx.push_back(0);
  Expr re = Halide::cast(kF64, x.at(idx));
  if (last.is_const(1)) return {re, Halide::cast(kF64, 0)};
  idx.back() = clamp_index(c, 1, last);
  Expr im = Halide::cast(kF64, x.at(idx));
  if (!last.is_const()) im = Halide::select(c.dim(last) > 1, im, Halide::cast(kF64, 0));
  return {re, im};
}

// A [.., 2] output from a Tuple stage F(idx without the last) = (re, im).
void define_complex_output(LowerContext &c, Func f, int rank) {
  c.add_stage(f, StageKind::Reduction, rank - 1);
  auto v = c.vars(rank);
  std::vector<Expr> outer(v.begin(), v.end() - 1);
  Expr re = f(reversed(outer))[0], im = f(reversed(outer))[1];
  c.define_output(0, v, Halide::select(v.back() == 0, re, im));
}

void require_complex_layout(InferContext &c, int i, const std::string &name) {
  if (c.rank(i) == 0) c.fail(name, " must have a last dim of 1 (real) or 2 (complex); it is a scalar");
  Dim last = c.store().canonical(c.shape(i).back());
  if (last.is_const() && last.as_const() != 1 && last.as_const() != 2)
    c.fail(name, "'s last dim must be 1 (real) or 2 (complex), got ", last.as_const());
  if (!last.is_const())
    c.store().add_check({RuntimeCheck::AtLeast, last, 1, c.where() + ": " + name + "'s last dim must be 1 or 2"});
}

// ---- DFT -------------------------------------------------------------------

struct DftSpec {
  int64_t axis;
  Dim length;  // the transform length N
  Dim out;     // N, or N / 2 + 1 when one-sided
  bool inverse, onesided;
};

DftSpec dft_spec(const NodeContext &c, const Shape &x) {
  int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 2) c.fail("input must be [..., signal, 1 or 2], got ", shape_str(x));
  DftSpec s;
  int64_t axis = c.attrs().get_int("axis", 1);
  if (c.opset() >= 20) {
    axis = -2;
    if (c.has_input(2)) axis = c.required_ints(2, "the DFT axis").at(0);
  }
  s.axis = normalize_axis(c, axis, rank);
  if (s.axis == rank - 1) c.fail("axis must not be the last (complex) axis");
  s.length = x[s.axis];
  if (c.has_input(1)) s.length = c.required_dims(1, "dft_length").at(0);
  s.inverse = c.attrs().get_int("inverse", 0) != 0;
  s.onesided = c.attrs().get_int("onesided", 0) != 0;
  s.out = s.onesided ? floor_div(s.length, 2) + 1 : s.length;
  return s;
}

void infer_dft(InferContext &c) {
  if (!dtype_is_float(c.dtype(0))) c.fail("input must be a float tensor");
  require_complex_layout(c, 0, "input");
  DftSpec s = dft_spec(c, c.shape(0));
  Shape out = c.shape(0);
  out[s.axis] = s.out;
  out.back() = 2;
  c.set_output(0, c.dtype(0), out);
}

// Y[k] = sum_n x[n] exp(-2 pi i k n / N), or the inverse's exp(+...) / N; a
// signal shorter than N is zero-padded, a longer one truncated.
void lower_dft(LowerContext &c) {
  const HTensor &x = c.in(0);
  DftSpec s = dft_spec(c, x.shape);
  int rank = x.rank();
  auto kv = c.vars(rank - 1);
  std::vector<Expr> k = c.exprs(kv);
  Expr len = c.dim(s.length);
  Halide::RDom r(0, Halide::min(len, c.dim(x.shape[s.axis])));
  std::vector<Expr> xi = k;
  xi[s.axis] = r;
  auto [re, im] = complex_read(c, x, xi);
  auto [cs, sn] = twiddle(k[s.axis], r, len);
  if (s.inverse) sn = -sn;
  Func f = c.func("dft");
  auto lhs = reversed(kv);
  f(lhs) = Halide::Tuple(Halide::cast(kF64, 0), Halide::cast(kF64, 0));
  f(lhs) = Halide::Tuple(f(lhs)[0] + re * cs + im * sn, f(lhs)[1] + im * cs - re * sn);
  if (s.inverse) {
    Expr n = Halide::cast(kF64, len);
    f(lhs) = Halide::Tuple(f(lhs)[0] / n, f(lhs)[1] / n);
  }
  define_complex_output(c, f, rank);
}

// ---- STFT ------------------------------------------------------------------

// Inputs: 0 signal [batch, length, 1 or 2], 1 frame_step, 2 window (optional),
// 3 frame_length (optional: the window's length otherwise).
struct StftSpec {
  int64_t step;
  Dim frame, frames, bins;
};

StftSpec stft_spec(const NodeContext &c, const Shape &x, const std::optional<Shape> &window) {
  StftSpec s;
  s.step = c.required_ints(1, "frame_step").at(0);
  if (s.step < 1) c.fail("frame_step must be positive, got ", s.step);
  if (c.has_input(3))
    s.frame = c.required_dims(3, "frame_length").at(0);
  else if (window)
    s.frame = window->at(0);
  else
    c.fail("needs a window or a frame_length");
  s.frames = floor_div(x[1] - s.frame, Dim(s.step)) + 1;
  s.bins = c.attrs().get_int("onesided", 1) != 0 ? floor_div(s.frame, 2) + 1 : s.frame;
  return s;
}

void infer_stft(InferContext &c) {
  if (!dtype_is_float(c.dtype(0))) c.fail("signal must be a float tensor");
  if (c.rank(0) != 3) c.fail("signal must be [batch, length, 1 or 2], got ", shape_str(c.shape(0)));
  require_complex_layout(c, 0, "signal");
  std::optional<Shape> window;
  if (c.has_input(2)) {
    if (c.rank(2) != 1) c.fail("window must be 1-D, got ", shape_str(c.shape(2)));
    window = c.shape(2);
  }
  StftSpec s = stft_spec(c, c.shape(0), window);
  if (window && c.has_input(3)) c.require_equal((*window)[0], s.frame, "window length must equal frame_length");
  Dim frames = c.store().canonical(s.frames);
  std::string what = "the signal must be at least one frame long";
  if (frames.is_const() && frames.as_const() < 1) c.fail(what);
  if (!frames.is_const()) c.store().add_check({RuntimeCheck::AtLeast, frames, 1, c.where() + ": " + what});
  c.set_output(0, c.dtype(0), {c.shape(0)[0], s.frames, s.bins, 2});
}

void lower_stft(LowerContext &c) {
  const HTensor &x = c.in(0);
  std::optional<Shape> window;
  if (c.has_input(2)) window = c.in(2).shape;
  StftSpec s = stft_spec(c, x.shape, window);
  auto kv = c.vars(3);  // batch, frame, bin
  std::vector<Expr> k = c.exprs(kv);
  Expr len = c.dim(s.frame);
  Halide::RDom r(0, len);
  Expr pos = clamp_index(c, k[1] * static_cast<int32_t>(s.step) + r, x.shape[1]);
  auto [re, im] = complex_read(c, x, {k[0], pos});
  if (window) {
    Expr w = Halide::cast(kF64, c.in(2).at({clamp_index(c, r, (*window)[0])}));
    re = re * w;
    im = im * w;
  }
  auto [cs, sn] = twiddle(k[2], r, len);
  Func f = c.func("stft");
  auto lhs = reversed(kv);
  f(lhs) = Halide::Tuple(Halide::cast(kF64, 0), Halide::cast(kF64, 0));
  f(lhs) = Halide::Tuple(f(lhs)[0] + re * cs + im * sn, f(lhs)[1] + im * cs - re * sn);
  define_complex_output(c, f, 4);
}

// ---- MelWeightMatrix -------------------------------------------------------

// Every input is needed at compile time, so the matrix is a constant, built
// the way ONNX's reference builds it (triangular filters between mel-spaced
// bin edges, floored to DFT bins).
void infer_mel(InferContext &c) {
  int64_t mel_bins = c.required_ints(0, "num_mel_bins").at(0);
  int64_t dft_length = c.required_ints(1, "dft_length").at(0);
  int64_t sample_rate = c.required_ints(2, "sample_rate").at(0);
  double lower = c.required_floats(3, "lower_edge_hertz").at(0);
  double upper = c.required_floats(4, "upper_edge_hertz").at(0);
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1)
    c.fail("num_mel_bins, dft_length and sample_rate must be positive");
  DType t = output_datatype(c);
  if (t != DType::F32 && t != DType::F64)
    c.fail("output_datatype ", dtype_name(t), " is not supported (float32 and float64 are)");
  int64_t spec_bins = dft_length / 2 + 1;
  // The matrix is made here, at compile time, and MelWeightMatrix has no kernel to leave it to:
  // bounded like every folded constant (lowering/constant_folding.h), so that a small model
  // cannot make the compiler fill gigabytes. Built in doubles first, so counted at 8 bytes.
  int64_t bytes = 0;
  if (__builtin_mul_overflow(spec_bins, mel_bins, &bytes) || __builtin_mul_overflow(bytes, int64_t(8), &bytes) ||
      bytes > kMaxFoldedBytes)
    c.fail("its matrix of ", spec_bins, " x ", mel_bins, " (dft_length / 2 + 1 by num_mel_bins) is made at compile "
           "time and would take more than ", bytes_text(kMaxFoldedBytes), ", the bound on constants made at compile time");
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double lo = to_mel(lower), step = (to_mel(upper) - lo) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(mel_bins + 2);
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo) / 2595.0) - 1.0);
    edge[i] =
        static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
  }
  std::vector<double> m(spec_bins * mel_bins, 0.0);
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j >= 0 && j < spec_bins) m[j * mel_bins + i] = v;
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left)
      set(center, i, 1.0);
    else
      for (int64_t j = left; j <= center; ++j)
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    if (right > center)
      for (int64_t j = center; j < right; ++j)
        set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  TensorData out(t, {spec_bins, mel_bins});
  for (size_t i = 0; i < m.size(); ++i) {
    if (t == DType::F64)
      out.mutable_as<double>()[i] = m[i];
    else
      out.mutable_as<float>()[i] = static_cast<float>(m[i]);
  }
  c.set_constant(0, std::move(out));
}

}  // namespace

void register_spectral_ops(OpRegistry &r) {
  for (const char *op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    r.add(op, 17, OpKind::Elementwise, infer_window, lower_window);
  r.add("DFT", 17, OpKind::Reduction, infer_dft, lower_dft);
  r.add("STFT", 17, OpKind::Reduction, infer_stft, lower_stft);
  r.add("MelWeightMatrix", 17, OpKind::ShapeOnly, infer_mel, nullptr);
}

}  // namespace disco
