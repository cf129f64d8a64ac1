// Constant weights laid out at compile time the way the dot kernels read
// them, so that no run transposes them: the result is a new constant, stored
// with the plan's other constants.
#pragma once

#include "frontend/graph.h"

namespace disco {

// A Gemm with transB = 1 whose B is a rank-2 constant (a PyTorch Linear
// exported as Gemm: B is [N, K]) reads B transposed instead: B^T [K, N]
// becomes its input and transB 0, so a vector of N is contiguous for the dot
// kernels (x86_dot_schedule.h) and the libraries alike. Returns the number of
// weights transposed.
int transpose_constant_weights(Graph &g);

}  // namespace disco
