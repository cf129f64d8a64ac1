// What the vitis_ai backend takes: the patterns a DPU runs, each as one unit
// of nodes (anchor first), within the documented limits of dpu_limits.h.
// Each rule's match (a VitisUnit) is the unit's payload, which compile()
// turns into an int8 op.
#pragma once
#include <string>
#include <vector>

#include "targets/backend.h"
#include "targets/vitis_ai/int8_ops.h"
#include "targets/vitis_ai/unit_kind.h"

namespace disco::vitis_ai {

struct VitisUnit : MatchPayload {
  UnitKind kind = UnitKind::Conv;
  std::vector<int> nodes;  // anchor first, then BatchNormalization and activation nodes
  int batchnorm = -1;      // a BatchNormalization folded into the conv's weights, or -1
  Activation act;          // applied before the output is rounded
  double leaky_alpha = 0;  // LeakyRelu's float alpha (act.leaky_num is its 1/256 approximation)
  int output = -1;         // the value the unit writes (its last node's output)
};

// One rule per anchor op; each takes a unit with its VitisUnit as the payload,
// or declines with the limit at fault.
std::vector<SupportRule> vitis_ai_rules();

}  // namespace disco::vitis_ai
