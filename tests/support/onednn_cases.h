// What the oneDNN backend's tests share: compile options that try oneDNN
// first, ramp tensors, and (through plan_steps.h) plan step lookups.
#pragma once
#include <string>
#include <vector>

#include "driver/compile_model.h"
#include "tests/support/plan_steps.h"
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
  return f32(std::move(shape), scale, offset);
}

inline std::vector<float> values(const TensorData &t) { return {t.as<float>(), t.as<float>() + t.num_elements()}; }

}  // namespace disco::testing
