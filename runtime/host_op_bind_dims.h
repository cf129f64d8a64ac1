// The host op disco::RunTimeDims (lowering/ops/run_time_dims.h): binds the
// elements of a small integer tensor, computed at run time from shapes, as
// symbols.
#pragma once
#include <vector>

#include "runtime/host_ops.h"

namespace disco {

// Outputs: a copy of the input, then per element i a zero-filled uint8 tensor
// of extent element i, whose shape binds that element's symbol. Throws for a
// negative element: a symbol is an extent.
std::vector<TensorData> run_time_dims(const std::vector<const TensorData *> &inputs, const HostAttrs &attrs);

}  // namespace disco
