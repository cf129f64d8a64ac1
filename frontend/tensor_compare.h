// How close two tensors are, in the rtol/atol sense used by the CLI's
// --expect and by the tests: NaN equals NaN, any other NaN difference is
// infinitely far.
#pragma once
#include "frontend/tensor_data.h"

namespace disco {

struct Closeness {
  double worst = 0;    // max |a - b| / (atol + rtol * |b|); <= 1 means within tolerance
  double max_abs = 0;  // max |a - b|
};

// `b` is the reference. Shapes must agree (throws otherwise).
Closeness closeness(const TensorData &a, const TensorData &b, double rtol, double atol);

}  // namespace disco
