#include "targets/vitis_ai/quantize.h"

#include <algorithm>
#include <cmath>

#include "frontend/errors.h"

namespace disco::vitis_ai {

int64_t ConstView::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int choose_fix(const float *v, int64_t n) {
  double max_abs = 0;
  for (int64_t i = 0; i < n; ++i) max_abs = std::max(max_abs, std::fabs(static_cast<double>(v[i])));
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return 7;  // all zero: any position is exact
  const int covering = static_cast<int>(std::floor(std::log2(127.0 / max_abs)));
  int best = covering;
  double best_err = INFINITY;
  for (int f = covering; f <= covering + 2; ++f) {  // larger positions clip the largest values
    double err = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(dequantize_value(quantize_value(v[i], f), f)) - v[i];
      err += d * d;
    }
    if (err < best_err) best = f, best_err = err;
  }
  return best;
}

Int8Tensor quantize_tensor(const float *v, std::vector<int64_t> shape, int fix) {
  Int8Tensor t = Int8Tensor::zeros(std::move(shape), fix);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = quantize_value(v[i], fix);
  return t;
}

int choose_bias_fix(const std::vector<float> &b, int acc_fix) { return std::min(choose_fix(b), acc_fix); }

FoldedWeights fold_conv(const ConstView &w, const ConstView &b, const ConstView bn[4], double eps) {
  DISCO_CHECK(w.data && w.shape.size() == 4, "vitis_ai: conv weights must be 4-D");
  FoldedWeights f;
  f.shape = w.shape;
  const int64_t M = w.shape[0], per = w.num_elements() / std::max<int64_t>(M, 1);
  f.w.assign(w.data, w.data + w.num_elements());
  f.b.assign(static_cast<size_t>(M), 0.0f);
  if (b.data) {
    DISCO_CHECK(b.num_elements() == M, "vitis_ai: conv bias has ", b.num_elements(), " values for ", M, " outputs");
    f.b.assign(b.data, b.data + M);
  }
  if (bn[0].data) {
    for (int i = 0; i < 4; ++i)
      DISCO_CHECK(bn[i].data && bn[i].num_elements() == M, "vitis_ai: BatchNormalization parameter ", i, " has ",
                  bn[i].num_elements(), " values for ", M, " channels");
    for (int64_t m = 0; m < M; ++m) {
      const double s = bn[0].data[m] / std::sqrt(static_cast<double>(bn[3].data[m]) + eps);
      for (int64_t i = 0; i < per; ++i) f.w[m * per + i] = static_cast<float>(f.w[m * per + i] * s);
      f.b[m] = static_cast<float>((f.b[m] - bn[2].data[m]) * s + bn[1].data[m]);
    }
  }
  return f;
}

FoldedWeights fold_gemm(const ConstView &w, bool trans_b, const ConstView &c, double alpha, double beta) {
  DISCO_CHECK(w.data && w.shape.size() == 2, "vitis_ai: Gemm weights must be 2-D");
  const int64_t K = trans_b ? w.shape[1] : w.shape[0], N = trans_b ? w.shape[0] : w.shape[1];
  FoldedWeights f;
  f.shape = {N, K};
  f.w.resize(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      f.w[n * K + k] = static_cast<float>(alpha * (trans_b ? w.data[n * K + k] : w.data[k * N + n]));
  f.b.assign(static_cast<size_t>(N), 0.0f);
  if (c.data) {
    const int64_t cn = c.num_elements();
    DISCO_CHECK(cn == N || cn == 1, "vitis_ai: Gemm C has ", cn, " values for ", N, " columns");
    for (int64_t n = 0; n < N; ++n) f.b[n] = static_cast<float>(beta * c.data[cn == 1 ? 0 : n]);
  }
  return f;
}

}  // namespace disco::vitis_ai
