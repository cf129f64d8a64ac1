// The example accelerator's support rules (see example_rules.cc).
#pragma once
#include <vector>

#include "targets/backend.h"

namespace disco {

std::vector<SupportRule> example_rules();

}  // namespace disco
