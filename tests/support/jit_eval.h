// Test support: runs a whole graph through shape inference and lowering, and
// realizes it with Halide's in-process JIT. Op tests use it to compare an op's
// numbers with reference values, independent of disco's kernel compiler.
#pragma once
#include <string>
#include <vector>

#include "frontend/graph.h"

namespace disco::testing {

std::vector<TensorData> jit_eval(Graph g, const std::vector<TensorData> &inputs);

// Runs the graph and expects an error naming `node` and containing `what`.
void expect_run_error(Graph g, const std::vector<TensorData> &inputs, const std::string &node, const std::string &what);

// Max |a - b| / (atol + rtol * |b|) over all elements; <= 1 means close.
double closeness(const TensorData &a, const TensorData &b, double rtol = 1e-4, double atol = 1e-5);

}  // namespace disco::testing
