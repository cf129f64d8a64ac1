// What the oneDNN backend's tests share: compile options that try oneDNN
// first, ramp tensors, and plan step lookups.
#pragma once
#include <string>
#include <vector>

#include "driver/compile_model.h"
#include "tests/support/tensors.h"

namespace disco::testing {

inline CompileOptions onednn_first() {
  CompileOptions o;
  o.backends = {"onednn", "host"};
  o.use_cache = false;
  return o;
}

// A float32 ramp of `shape` (see ramp()).
inline TensorData tensor(std::vector<int64_t> shape, float scale = 0.25f, int offset = 0) {
  return f32(shape, ramp(numel(shape), scale, offset));
}

inline std::vector<float> values(const TensorData &t) { return {t.as<float>(), t.as<float>() + t.num_elements()}; }

struct StepCount {
  int onednn = 0, other = 0;
};

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
