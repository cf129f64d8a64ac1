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
    if (std::isnan(x) && std::isnan(y)) continue;
    double d = std::fabs(x - y);
    if (std::isnan(d)) d = INFINITY;
    c.max_abs = std::max(c.max_abs, d);
    c.worst = std::max(c.worst, d / (atol + rtol * std::fabs(y)));
  }
  return c;
}

}  // namespace disco
