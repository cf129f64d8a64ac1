// The vitis_ai runtime glue: "vitis_ai.region" runs one region's QProgram on
// the int8 reference executor, with float <-> int8 conversion at its edges.
// (Where a compiled DPU model and a device exist, vart_runner.h runs the
// region through VART instead; see README.md.)
#include <cstring>

#include "frontend/errors.h"
#include "runtime/extern_kernel.h"
#include "targets/vitis_ai/region_executor.h"
#include "targets/vitis_ai/vitis_ai_backend.h"

namespace disco {
namespace {

using namespace vitis_ai;

std::string shape_text(const std::vector<int64_t> &s) { return "[" + join_ints(s) + "]"; }

class VitisRegionKernel : public ExternKernel {
 public:
  explicit VitisRegionKernel(const PlanStep &step)
      : label_("step " + step.label + " (vitis_ai.region)"),
        exec_(parse_program(param_str(step, "program"), "step " + step.label), label_) {}

  void run(const ExternCall &call) override {
    const QProgram &p = exec_.program();
    DISCO_CHECK(static_cast<int>(call.inputs.size()) >= p.num_inputs && call.outputs.size() == p.outputs.size(),
                label_, ": ", call.inputs.size(), " inputs and ", call.outputs.size(), " outputs do not fit the program");
    for (const ExternTensor &t : call.inputs)
      DISCO_CHECK(t.data && t.dtype == DType::F32, label_, ": an input is ", dtype_name(t.dtype), ", expected float32");
    exec_.prepare([&](int idx) {
      DISCO_CHECK(idx >= p.num_inputs && idx < static_cast<int>(call.inputs.size()) && call.inputs[idx].constant,
                  label_, ": constant ", idx, " is missing");
      return ConstView{static_cast<const float *>(call.inputs[idx].data), call.inputs[idx].shape};
    });
    std::vector<Int8Tensor> in;
    for (int i = 0; i < p.num_inputs; ++i)
      in.push_back(quantize_tensor(static_cast<const float *>(call.inputs[i].data), call.inputs[i].shape, p.fix[i]));
    const std::vector<Int8Tensor> slots = exec_.run(std::move(in));
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      const Int8Tensor &q = slots[p.outputs[k]];
      const ExternTensor &y = call.outputs[k];
      DISCO_CHECK(y.dtype == DType::F32 && y.shape == q.shape, label_, ": output ", k, " is ", shape_text(y.shape),
                  ", the region computed ", shape_text(q.shape));
      float *dst = static_cast<float *>(y.data);
      for (size_t i = 0; i < q.data.size(); ++i) dst[i] = dequantize_value(q.data[i], q.fix);
    }
  }

 private:
  std::string label_;
  RegionExecutor exec_;
};

}  // namespace

void install_vitis_ai_runtime() {
  ExternKernelRegistry::global().add("vitis_ai.region",
                                     [](const PlanStep &s) { return std::make_unique<VitisRegionKernel>(s); });
}

}  // namespace disco
