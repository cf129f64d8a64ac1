// The example accelerator's support rules (see example_rules.cc), and what
// they hand compile() with each unit they take.
#pragma once
#include <cstdint>
#include <vector>

#include "targets/backend.h"

namespace disco {

// A matched unit: the anchor (Conv or Add), maybe with the Relu after it.
struct ExampleUnit : MatchPayload {
  std::vector<int> nodes;                     // anchor first
  bool conv = false, relu = false;
  std::vector<int64_t> strides, dilations, pads;  // Conv, ONNX defaults filled in
};

std::vector<SupportRule> example_rules();

}  // namespace disco
