// The vitis_ai runtime glue: "vitis_ai.region" runs one region's QProgram on
// the int8 reference executor, with float <-> int8 conversion at its edges.
// It needs no Halide and no compiler (disco_vitis_ai_runtime), so AOT
// libraries hold it too (vitis_ai_aot_glue.cc).
//
// Where a compiled DPU model exists ($DISCO_VITIS_AI_DPU_DIR holds the
// vai_c_xir output for the region, under the .xmodel's name) the region runs
// through vart::Runner instead (vart_runner.h), with the runner library from
// $DISCO_VITIS_AI_RUNNER when set; NCHW <-> NHWC at the edges. Shapes the
// compiled model was not made for fall back to the reference executor.
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "frontend/errors.h"
#include "runtime/extern_kernel.h"
#include "targets/vitis_ai/region_executor.h"
#include "targets/vitis_ai/vart_runner.h"
#include "targets/vitis_ai/vitis_ai_runtime.h"

namespace disco {
namespace {

using namespace vitis_ai;

std::string shape_text(const std::vector<int64_t> &s) { return "[" + join_ints(s) + "]"; }

std::vector<int64_t> nhwc(const std::vector<int64_t> &s) {
  return s.size() == 4 ? std::vector<int64_t>{s[0], s[2], s[3], s[1]} : s;
}

// NCHW <-> NHWC copies of a tensor of NCHW shape `s` (rank 2 tensors are
// copied as they are).
void copy_nhwc(const float *src, const std::vector<int64_t> &s, float *dst, bool to_nhwc) {
  if (s.size() != 4) return (void)std::memcpy(dst, src, sizeof(float) * ExternTensor{nullptr, DType::F32, s}.num_elements());
  const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < HW; ++p) {
        const int64_t nchw = (n * C + c) * HW + p, nhwc = (n * HW + p) * C + c;
        if (to_nhwc)
          dst[nhwc] = src[nchw];
        else
          dst[nchw] = src[nhwc];
      }
}

// The compiled DPU model for this step, when one is installed.
std::unique_ptr<VartRegionRunner> compiled_model_runner(const PlanStep &step) {
  const char *dir = std::getenv("DISCO_VITIS_AI_DPU_DIR");
  if (!dir || !*dir || !has_param(step, "xmodel")) return nullptr;
  const std::string path = std::string(dir) + "/" + param_str(step, "xmodel");
  if (!std::filesystem::exists(path)) return nullptr;
  const char *lib = std::getenv("DISCO_VITIS_AI_RUNNER");
  return std::make_unique<VartRegionRunner>(path, lib ? lib : "");
}

class VitisRegionKernel : public ExternKernel {
 public:
  explicit VitisRegionKernel(const PlanStep &step)
      : label_("step " + step.label + " (vitis_ai.region)"),
        exec_(parse_program(param_str(step, "program"), "step " + step.label), label_),
        dpu_(compiled_model_runner(step)) {}

  void run(const ExternCall &call) override {
    const QProgram &p = exec_.program();
    DISCO_CHECK(static_cast<int>(call.inputs.size()) >= p.num_inputs && call.outputs.size() == p.outputs.size(),
                label_, ": ", call.inputs.size(), " inputs and ", call.outputs.size(), " outputs do not fit the program");
    for (const ExternTensor &t : call.inputs)
      DISCO_CHECK(t.data && t.dtype == DType::F32, label_, ": an input is ", dtype_name(t.dtype), ", expected float32");
    if (dpu_ && run_on_dpu(call)) return;
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
  // Runs the region through VART when the compiled model's tensors have the
  // region's shapes (the model is compiled for one shape); else returns false.
  bool run_on_dpu(const ExternCall &call) {
    const QProgram &p = exec_.program();
    const auto ins = dpu_->inputs(), outs = dpu_->outputs();
    if (static_cast<int>(ins.size()) != p.num_inputs || outs.size() != call.outputs.size()) return false;
    for (int i = 0; i < p.num_inputs; ++i)
      if (ins[i].shape != nhwc(call.inputs[i].shape)) return false;
    for (size_t k = 0; k < outs.size(); ++k)
      if (outs[k].shape != nhwc(call.outputs[k].shape)) return false;
    std::vector<std::vector<float>> in(p.num_inputs), out(outs.size());
    std::vector<const float *> in_p;
    std::vector<float *> out_p;
    for (int i = 0; i < p.num_inputs; ++i) {
      in[i].resize(call.inputs[i].num_elements());
      copy_nhwc(static_cast<const float *>(call.inputs[i].data), call.inputs[i].shape, in[i].data(), true);
      in_p.push_back(in[i].data());
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      out[k].resize(call.outputs[k].num_elements());
      out_p.push_back(out[k].data());
    }
    dpu_->run(in_p, out_p);
    for (size_t k = 0; k < outs.size(); ++k)
      copy_nhwc(out[k].data(), call.outputs[k].shape, static_cast<float *>(call.outputs[k].data), false);
    return true;
  }

  std::string label_;
  RegionExecutor exec_;
  std::unique_ptr<VartRegionRunner> dpu_;
};

}  // namespace

namespace vitis_ai {

void install_region_kernel() {
  static const bool done = (ExternKernelRegistry::global().add(
                                "vitis_ai.region", [](const PlanStep &s) { return std::make_unique<VitisRegionKernel>(s); }),
                            true);
  (void)done;
}

}  // namespace vitis_ai
}  // namespace disco
