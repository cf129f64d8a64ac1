// ONNX's GRU (gates z, r, h; f = Sigmoid, g = Tanh; no clip, sequence_lens
// or initial state), written from the operator's spec in double, for tests
// of disco's recurrent kernels: y [T, D, B, H] from x [T, B, I] (layout 0),
// W [D, 3H, I], R [D, 3H, H] and B [D, 6H], row-major.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace disco::testing {

struct GruShape {
  int64_t T, B, I, H, D;
};

inline std::vector<double> reference_gru(const GruShape &s, const std::vector<float> &x, const std::vector<float> &w,
                                         const std::vector<float> &r, const std::vector<float> &bias,
                                         bool linear_before_reset) {
  const int64_t T = s.T, B = s.B, I = s.I, H = s.H, D = s.D, G = 3;
  std::vector<double> y(static_cast<size_t>(T * D * B * H));
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0);
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d == 0 ? step : T - 1 - step;
        // x·W^T + Wb and src·R^T + Rb for gate row `row`.
        auto xw = [&](int64_t row) {
          double v = bias[static_cast<size_t>(d * 2 * G * H + row)];
          for (int64_t i = 0; i < I; ++i)
            v += x[static_cast<size_t>((t * B + b) * I + i)] * w[static_cast<size_t>((d * G * H + row) * I + i)];
          return v;
        };
        auto hr = [&](int64_t row, const std::vector<double> &src) {
          double v = bias[static_cast<size_t>(d * 2 * G * H + G * H + row)];
          for (int64_t k = 0; k < H; ++k)
            v += src[static_cast<size_t>(k)] * r[static_cast<size_t>((d * G * H + row) * H + k)];
          return v;
        };
        std::vector<double> z(static_cast<size_t>(H)), rg(static_cast<size_t>(H)), rh(static_cast<size_t>(H)),
            next(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          const auto u = static_cast<size_t>(j);
          z[u] = sigmoid(xw(j) + hr(j, h));
          rg[u] = sigmoid(xw(H + j) + hr(H + j, h));
          rh[u] = rg[u] * h[u];
        }
        for (int64_t j = 0; j < H; ++j) {
          const auto u = static_cast<size_t>(j);
          const double n = linear_before_reset ? std::tanh(xw(2 * H + j) + rg[u] * hr(2 * H + j, h))
                                               : std::tanh(xw(2 * H + j) + hr(2 * H + j, rh));
          next[u] = (1 - z[u]) * n + z[u] * h[u];
        }
        h = next;
        for (int64_t j = 0; j < H; ++j)
          y[static_cast<size_t>(((t * D + d) * B + b) * H + j)] = h[static_cast<size_t>(j)];
      }
    }
  return y;
}

}  // namespace disco::testing
