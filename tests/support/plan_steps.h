// Plan step lookups that the backend tests share: how many steps call a
// kernel, how many are a backend's, and the nth step that calls a kernel.
#pragma once
#include <algorithm>
#include <string>

#include "driver/compile_model.h"

namespace disco::testing {

// The number of steps whose extern call is exactly `call`.
inline int count_steps(const Plan &plan, const std::string &call) {
  return static_cast<int>(
      std::count_if(plan.steps.begin(), plan.steps.end(), [&](const PlanStep &s) { return s.extern_call == call; }));
}

struct StepCount {
  int onednn = 0, other = 0;
};

// The steps that call oneDNN ("onednn.*") and all the others.
inline StepCount count_steps(const Plan &p) {
  StepCount c;
  for (const auto &s : p.steps) (s.extern_call.rfind("onednn.", 0) == 0 ? c.onednn : c.other) += 1;
  return c;
}

// The nth step that calls `call`; null when there is none.
inline const PlanStep *find_step(const Plan &p, const std::string &call, int nth = 0) {
  for (const auto &s : p.steps)
    if (s.extern_call == call && nth-- == 0) return &s;
  return nullptr;
}

}  // namespace disco::testing
