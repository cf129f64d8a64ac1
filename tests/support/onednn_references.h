// Plain scalar references and helpers that the oneDNN backend's tests share:
// ONNX MatMul and 2-D Conv in loops, an element-wise comparison, and a kernel
// of the glue made as the executor makes it.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/extern_kernel.h"
#include "targets/onednn/onednn_kernels.h"
#include "tests/support/tensors.h"

namespace disco::testing {

using Dims = std::vector<int64_t>;

// GELU in its erf form, as PyTorch exports it.
inline double gelu(double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }

// Row-major `v` of `shape`, broadcast (numpy rules) to `out`.
inline std::vector<float> expand(const std::vector<float> &v, Dims shape, const Dims &out) {
  shape.insert(shape.begin(), out.size() - shape.size(), 1);
  std::vector<float> r(numel(out));
  for (int64_t i = 0; i < numel(out); ++i) {
    int64_t rest = i, off = 0, stride = 1;
    for (size_t d = out.size(); d-- > 0;) {
      const int64_t idx = rest % out[d];
      rest /= out[d];
      off += (shape[d] == 1 ? 0 : idx) * stride;
      stride *= shape[d];
    }
    r[i] = v[off];
  }
  return r;
}

// ONNX MatMul (ranks >= 2, batch dims broadcast) in plain loops.
inline std::vector<float> ref_matmul(const std::vector<float> &a, Dims sa, const std::vector<float> &b, Dims sb, Dims *out) {
  const size_t r = std::max(sa.size(), sb.size());
  sa.insert(sa.begin(), r - sa.size(), 1);
  sb.insert(sb.begin(), r - sb.size(), 1);
  const int64_t m = sa[r - 2], k = sa[r - 1], n = sb[r - 1];
  Dims batch;
  for (size_t d = 0; d + 2 < r; ++d) batch.push_back(std::max(sa[d], sb[d]));
  Dims oa = batch, ob = batch;
  oa.insert(oa.end(), {m, k});
  ob.insert(ob.end(), {k, n});
  const auto ea = expand(a, sa, oa), eb = expand(b, sb, ob);
  *out = batch;
  out->insert(out->end(), {m, n});
  std::vector<float> y(numel(*out), 0.0f);
  for (int64_t p = 0; p < numel(batch); ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += double(ea[(p * m + i) * k + q]) * eb[(p * k + q) * n + j];
        y[(p * m + i) * n + j] = static_cast<float>(s);
      }
  return y;
}

// ONNX GlobalAveragePool of NCHW x, in double.
inline std::vector<float> ref_global_average(const std::vector<float> &x, const Dims &xs, Dims *out) {
  *out = {xs[0], xs[1], 1, 1};
  const int64_t hw = xs[2] * xs[3];
  std::vector<float> y(numel(*out));
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p) {
    double s = 0;
    for (int64_t k = 0; k < hw; ++k) s += x[p * hw + k];
    y[p] = static_cast<float>(s / hw);
  }
  return y;
}

// ONNX Conv, 2-D, explicit pads {top, left, bottom, right}.
inline std::vector<float> ref_conv2d(const std::vector<float> &x, const Dims &xs, const std::vector<float> &w, const Dims &ws,
                              const std::vector<float> &bias, Dims strides, Dims dil, Dims pads, int64_t group,
                              Dims *out) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], m = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  const int64_t oh = (h + pads[0] + pads[2] - (dil[0] * (kh - 1) + 1)) / strides[0] + 1;
  const int64_t ow = (wd + pads[1] + pads[3] - (dil[1] * (kw - 1) + 1)) / strides[1] + 1;
  *out = {n, m, oh, ow};
  std::vector<float> y(numel(*out));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = bias.empty() ? 0.0 : bias[o];
          const int64_t g = o / (m / group);
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t yy = i * strides[0] + p * dil[0] - pads[0], xx = j * strides[1] + q * dil[1] - pads[1];
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                s += double(x[((b * c + g * cg + ci) * h + yy) * wd + xx]) * w[((o * cg + ci) * kh + p) * kw + q];
              }
          y[((b * m + o) * oh + i) * ow + j] = static_cast<float>(s);
        }
  (void)c;
  return y;
}

inline void expect_near_all(const TensorData &got, const Dims &shape, const std::vector<float> &want, const std::string &what,
                     double rtol = 1e-4, double atol = 1e-5) {
  ASSERT_EQ(got.shape, shape) << what;
  ASSERT_EQ(static_cast<size_t>(got.num_elements()), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.as<float>()[i], want[i], atol + rtol * std::fabs(want[i])) << what << " element " << i;
}

// A kernel of the glue, made as the executor makes it.
inline std::unique_ptr<OnednnKernel> make_kernel(const std::string &call, std::map<std::string, std::string> params) {
  install_onednn_runtime();
  PlanStep step;
  step.extern_call = call;
  step.label = "test_step";
  step.params = std::move(params);
  const ExternKernelFactory *make = ExternKernelRegistry::global().find(call);
  EXPECT_TRUE(make) << call;
  std::unique_ptr<ExternKernel> k = (*make)(step);
  auto *o = dynamic_cast<OnednnKernel *>(k.get());
  EXPECT_TRUE(o);
  k.release();
  return std::unique_ptr<OnednnKernel>(o);
}

inline ExternTensor view(TensorData &t, bool constant = false) { return {t.mutable_data(), t.dtype, t.shape, constant}; }

}  // namespace disco::testing
