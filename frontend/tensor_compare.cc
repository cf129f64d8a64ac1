#include "frontend/tensor_compare.h"

#include <algorithm>
#include <cmath>

#include "frontend/errors.h"

namespace disco {

Closeness closeness(const TensorData &a, const TensorData &b, double rtol, double atol) {
  DISCO_CHECK(a.shape == b.shape, "closeness: shapes differ");
  Closeness c;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double x = a.float_at(i), y = b.float_at(i);
    if ((std::isnan(x) && std::isnan(y)) || (std::isinf(y) && x == y)) continue;
    // A NaN or an infinity on either side, unmatched, is infinitely far. Left
    // to the arithmetic, a reference NaN or infinity made the ratio NaN, which
    // std::max drops: a finite result passed against it.
    if (!std::isfinite(x) || !std::isfinite(y)) {
      c.max_abs = c.worst = INFINITY;
      continue;
    }
    const double d = std::fabs(x - y);
    c.max_abs = std::max(c.max_abs, d);
    c.worst = std::max(c.worst, d / (atol + rtol * std::fabs(y)));
  }
  return c;
}

}  // namespace disco
