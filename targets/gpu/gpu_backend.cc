#include "targets/gpu/gpu_backend.h"

#include "frontend/errors.h"
#include "lowering/op_registry.h"
#include "schedules/gpu_schedule.h"
#include "targets/host/host_backend.h"
#include "targets/host/host_codegen.h"
#include "targets/plan_builder.h"

namespace disco {

namespace {

// What OpenCL kernels cannot do correctly here; the host backend takes it.
bool opencl_can_run(const MatchContext &ctx, const Node &n, std::string *why) {
  std::vector<int> values = n.inputs;
  values.insert(values.end(), n.outputs.begin(), n.outputs.end());
  for (int vid : values) {
    const DType t = vid >= 0 ? ctx.value(vid).dtype : DType::Undefined;
    if (t == DType::F16 || t == DType::BF16) {
      *why = "float16/bfloat16 need the OpenCL half type (cl_khr_fp16), which PoCL's CPU device lacks";
      return false;
    }
  }
  // Halide 14 emits OpenCL's round(), which rounds halves away from zero; ONNX rounds them to even.
  if (n.op_type == "Round" || n.op_type == "GridSample") {
    *why = "Halide's OpenCL round() rounds halves away from zero, ONNX to even";
    return false;
  }
  return true;
}

class GpuBackend : public Backend {
 public:
  GpuBackend(std::string name, Halide::Target::Feature api) : name_(std::move(name)), api_(api) {}
  std::string name() const override { return name_; }
  std::optional<AotGlue> aot_glue() const override { return AotGlue{}; }  // Halide kernels alone
  std::vector<SupportRule> rules() const override {
    const bool opencl = api_ == Halide::Target::OpenCL;
    return {{"lowerable", {}, [opencl](const MatchContext &ctx, int node) {
               const Node &n = ctx.node(node);
               if (!OpRegistry::global().find(n.domain, n.op_type, n.opset))
                 return decline("no lowering for this op and opset");
               std::string why;
               if (opencl && !opencl_can_run(ctx, n, &why)) return decline(why);
               return take({node});
             }}};
  }
  Declined compile(const Region &region, PlanBuilder &b) const override {
    DISCO_CHECK(parse_target(b.target()).has_feature(api_), "backend '", name_, "' needs a ", name_,
                " target (--target ", name_, "), not '", b.target(), "'");
    compile_region_groups(region, b, [](LoweredKernel &k, GroupKind kind, const ShapeStore &store,
                                         const Halide::Target &) { return schedule_gpu(k, kind, store); });
    return {};
  }

 private:
  std::string name_;
  Halide::Target::Feature api_;
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend() {
  return std::make_unique<GpuBackend>("opencl", Halide::Target::OpenCL);
}
std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<GpuBackend>("cuda", Halide::Target::CUDA); }

}  // namespace disco
