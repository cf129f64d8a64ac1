#include "targets/gpu/gpu_backend.h"

#include "frontend/errors.h"
#include "lowering/op_registry.h"
#include "targets/gpu/gpu_schedule.h"
#include "targets/host/host_backend.h"
#include "targets/host/host_codegen.h"
#include "targets/plan_builder.h"

namespace disco {

namespace {

class GpuBackend : public Backend {
 public:
  GpuBackend(std::string name, Halide::Target::Feature api) : name_(std::move(name)), api_(api) {}
  std::string name() const override { return name_; }
  std::vector<SupportRule> rules() const override {
    return {{"lowerable", {}, [](const MatchContext &ctx, int node, std::string *why) -> std::vector<int> {
               const Node &n = ctx.node(node);
               if (!OpRegistry::global().find(n.domain, n.op_type, n.opset)) {
                 *why = "no lowering for this op and opset";
                 return {};
               }
               return {node};
             }}};
  }
  void compile(const Region &region, PlanBuilder &b) const override {
    DISCO_CHECK(parse_target(b.target()).has_feature(api_), "backend '", name_, "' needs a ", name_,
                " target (--target ", name_, "), not '", b.target(), "'");
    compile_region_groups(region, b, [](LoweredKernel &k, GroupKind kind, const ShapeStore &store,
                                         const Halide::Target &) { return schedule_gpu(k, kind, store); });
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
