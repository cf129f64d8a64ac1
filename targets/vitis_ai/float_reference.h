// A plain float interpreter for the ops around DPU regions, used to calibrate
// activations: it runs the float model on the calibration inputs and keeps
// every value it computes. Nodes it does not know leave their outputs (and
// everything computed from them) absent; the backend then keeps regions that
// need those values on the host.
#pragma once
#include <map>
#include <vector>

#include "frontend/graph.h"

namespace disco::vitis_ai {

struct FloatTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// `inputs`: graph input value id -> tensor. Returns value id -> tensor for
// every value computed (constants excluded).
std::map<int, FloatTensor> evaluate_float(const Graph &g, const std::map<int, FloatTensor> &inputs);

}  // namespace disco::vitis_ai
