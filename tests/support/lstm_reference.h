// ONNX's LSTM (gates i, o, f, c; f = Sigmoid, g = h = Tanh; no peepholes,
// clip, sequence_lens or initial state), written from the operator's spec in
// double, for tests of disco's recurrent kernels: y [T, D, B, H] from
// x [T, B, I] (layout 0), W [D, 4H, I], R [D, 4H, H] and B [D, 8H], row-major.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace disco::testing {

struct LstmShape {
  int64_t T, B, I, H, D;
};

inline std::vector<double> reference_lstm(const LstmShape &s, const std::vector<float> &x, const std::vector<float> &w,
                                          const std::vector<float> &r, const std::vector<float> &bias) {
  const int64_t T = s.T, B = s.B, I = s.I, H = s.H, D = s.D, G = 4;
  std::vector<double> y(static_cast<size_t>(T * D * B * H));
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), c(static_cast<size_t>(H), 0.0);
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d == 0 ? step : T - 1 - step;
        // x·W^T + Wb + h·R^T + Rb for gate row `row`.
        auto gate = [&](int64_t row) {
          double v =
              bias[static_cast<size_t>(d * 2 * G * H + row)] + bias[static_cast<size_t>(d * 2 * G * H + G * H + row)];
          for (int64_t i = 0; i < I; ++i)
            v += x[static_cast<size_t>((t * B + b) * I + i)] * w[static_cast<size_t>((d * G * H + row) * I + i)];
          for (int64_t k = 0; k < H; ++k)
            v += h[static_cast<size_t>(k)] * r[static_cast<size_t>((d * G * H + row) * H + k)];
          return v;
        };
        std::vector<double> next(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          const auto u = static_cast<size_t>(j);
          const double i = sigmoid(gate(j)), o = sigmoid(gate(H + j)), f = sigmoid(gate(2 * H + j)),
                       cc = std::tanh(gate(3 * H + j));
          c[u] = f * c[u] + i * cc;
          next[u] = o * std::tanh(c[u]);
        }
        h = next;
        for (int64_t j = 0; j < H; ++j)
          y[static_cast<size_t>(((t * D + d) * B + b) * H + j)] = h[static_cast<size_t>(j)];
      }
    }
  return y;
}

}  // namespace disco::testing
