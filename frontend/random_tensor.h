// Deterministic random tensors (xorshift, seeded): inputs for `disco run
// --shape` and the benchmarks. Floats are uniform in [-1, 1), integers in [0, 10).
#pragma once
#include <cstdint>
#include <vector>

#include "frontend/tensor_data.h"

namespace disco {

TensorData random_tensor(DType t, const std::vector<int64_t> &shape, uint64_t seed);

}  // namespace disco
