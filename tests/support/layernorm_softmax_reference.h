// A float64 reference for LayerNormalization (epsilon 1e-5) over rows of
// `channels`, a per-channel affine (* c + d) and a Softmax over each row.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace disco::testing {

inline std::vector<float> layernorm_affine_softmax_reference(const std::vector<float> &x, size_t channels,
                                                             const std::vector<float> &gamma,
                                                             const std::vector<float> &beta,
                                                             const std::vector<float> &c,
                                                             const std::vector<float> &d) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / channels; ++r) {
    const float *row = &x[r * channels];
    double mean = 0, var = 0, mx = -1e300, sum = 0;
    for (size_t i = 0; i < channels; ++i) mean += row[i];
    mean /= static_cast<double>(channels);
    for (size_t i = 0; i < channels; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= static_cast<double>(channels);
    std::vector<double> a(channels);
    for (size_t i = 0; i < channels; ++i) {
      a[i] = ((row[i] - mean) / std::sqrt(var + 1e-5) * gamma[i] + beta[i]) * c[i] + d[i];
      mx = std::max(mx, a[i]);
    }
    for (size_t i = 0; i < channels; ++i) sum += std::exp(a[i] - mx);
    for (size_t i = 0; i < channels; ++i) y[r * channels + i] = static_cast<float>(std::exp(a[i] - mx) / sum);
  }
  return y;
}

}  // namespace disco::testing
