// Runs a QProgram on the host with the int8 reference executor: quantizes
// the region's float inputs, runs each op on int8 slots, dequantizes the
// outputs. This is what the DPU would compute, bit for bit.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "targets/vitis_ai/quantize.h"
#include "targets/vitis_ai/region_program.h"

namespace disco::vitis_ai {

class RegionExecutor {
 public:
  RegionExecutor(QProgram program, std::string label);
  const QProgram &program() const { return program_; }
  // Folds and quantizes the weights once; `constant` returns the step's constant inputs.
  void prepare(const std::function<ConstView(int step_input)> &constant);
  // Inputs in slot order (already quantized); returns every slot.
  std::vector<Int8Tensor> run(std::vector<Int8Tensor> inputs) const;

 private:
  QProgram program_;
  std::string label_;
  bool prepared_ = false;
  std::vector<Int8Tensor> weights_, biases_;  // per op; empty for ops without weights
};

}  // namespace disco::vitis_ai
