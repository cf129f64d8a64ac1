// The cuBLAS Backend: one extern step per unit. Inputs: A, B, then the
// operands of the epilogue's Adds in order. Output: the unit's last value
// (its intermediates each have one reader, inside the unit).
#include "targets/cublas/cublas_backend.h"

#include <sstream>

#include "runtime/extern_kernel.h"
#include "targets/cublas/cublas_rules.h"
#include "targets/partitioner.h"
#include "targets/plan_builder.h"

namespace disco {

namespace {

PlanStep unit_step(const CublasUnit &u, const Region &region, PlanBuilder &b) {
  PlanStep step;
  step.extern_call = "cublas.matmul";
  for (int n : u.nodes) step.label += (step.label.empty() ? "" : " ") + b.graph().nodes[n].name;
  for (const std::string &sym : region.symbols) step.symbols.push_back(Dim::symbol(sym));
  step.params["gemm"] = u.anchor == CublasUnit::Gemm ? "1" : "0";
  step.params["trans_a"] = u.trans_a ? "1" : "0";
  step.params["trans_b"] = u.trans_b ? "1" : "0";
  std::ostringstream alpha;
  alpha.precision(17);
  alpha << u.alpha;
  step.params["alpha"] = alpha.str();
  step.params["epilogue"] = epilogue_to_string(u.epilogue);
  step.inputs = {b.input_buffer(u.a), b.input_buffer(u.b)};
  for (const auto &op : u.epilogue)
    if (op.kind == CublasEpilogueOp::Add) step.inputs.push_back(b.input_buffer(op.operand));
  step.outputs.push_back(b.output_buffer(u.output));
  return step;
}

class CublasBackend : public Backend {
 public:
  std::string name() const override { return "cublas"; }
  std::vector<SupportRule> rules() const override { return cublas_rules(); }
  // A lone GEMM is worth the hand-over: it is the bulk of the work.
  int min_region_nodes() const override { return 1; }
  // The runtime glue (cublas_aot_glue.cc): the kernel dlopens the CUDA driver
  // and cuBLAS at its first run, so a library links only libdl and C++'s
  // runtime (and OpenMP, which disco_runtime's members may use).
  std::optional<AotGlue> aot_glue() const override {
    AotGlue g;
    g.install_function = "disco_install_cublas_glue";
    for (const char *a : {DISCO_CUBLAS_GLUE_ARCHIVES}) g.archives.push_back(a);
    g.link_flags = {"-lgomp", "-lstdc++"};
    return g;
  }
  // Units come sorted by anchor, in graph order, and only a unit's anchor and
  // its constant or Gemm-C operands read from outside it, so this order writes
  // every value before a step reads it.
  Declined compile(const Region &region, PlanBuilder &b) const override {
    add_unit_steps(region.units, b, "cublas step ",
                   [&](const Unit &unit) { return unit_step(unit.payload_as<CublasUnit>(), region, b); });
    return {};
  }
};

}  // namespace

std::unique_ptr<Backend> make_cublas_backend() { return std::make_unique<CublasBackend>(); }

}  // namespace disco
