// Turns a vitis_ai region into a QProgram: a slot per value, a fix position
// per slot (from calibration, or inherited where the DPU keeps it: max
// pooling, resize, flatten), folded weights' fix positions per conv and gemm.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "targets/partitioner.h"
#include "targets/vitis_ai/calibrate.h"
#include "targets/vitis_ai/region_program.h"
#include "targets/vitis_ai/quantize.h"
#include "targets/vitis_ai/vitis_ai_rules.h"

namespace disco::vitis_ai {

struct BuiltRegion {
  QProgram program;
  std::vector<int> const_values;  // value ids of the constants, by step-input index - num_inputs
  std::vector<int> slot_values;   // value id of each slot
};

// nullopt with `*why` when the region cannot be quantized (no calibration
// data reaches one of its values). The units' payloads are VitisUnits.
std::optional<BuiltRegion> build_region(const Graph &g, const Region &region,
                                        const Calibration &calib, std::string *why);

}  // namespace disco::vitis_ai
