// The vitis_ai Backend. compile() calibrates the float model once (the first
// region asks), turns each region into a QProgram run by one extern step,
// and writes the region's quantized XIR graph next to the plan. A region
// that cannot be quantized or expressed in XIR is handed back whole, with the
// reason: the partitioner gives it to the next backend (targets/partitioner.h).
#include "targets/vitis_ai/vitis_ai_backend.h"

#include <mutex>
#include <optional>
#include <sstream>

#include "frontend/errors.h"
#include "targets/partitioner.h"
#include "targets/plan_builder.h"
#include "targets/vitis_ai/int8_engine.h"
#include "targets/vitis_ai/region_builder.h"
#include "targets/vitis_ai/vitis_ai_rules.h"
#include "targets/vitis_ai/vitis_ai_runtime.h"
#include "targets/vitis_ai/xir_emit.h"

namespace disco {
namespace {

using namespace vitis_ai;

// The plan's name, as PlanBuilder prefixes kernel names with it ("convnet_k3").
std::string plan_name(PlanBuilder &b) {
  std::string k = b.next_kernel_name();
  return k.substr(0, k.rfind("_k"));
}

XirRegion xir_region(const Graph &g, const BuiltRegion &built, const Calibration &calib, const std::string &name) {
  XirRegion r;
  r.name = name;
  r.program = &built.program;
  for (int vid : built.slot_values) {
    auto it = calib.shape.find(vid);
    r.shapes.push_back(it == calib.shape.end() ? std::vector<int64_t>{} : it->second);
    r.slot_names.push_back(g.value(vid).name);
  }
  const int base = built.program.num_inputs;
  const std::vector<int> consts = built.const_values;
  r.constant = [&g, consts, base](int idx) {
    const TensorData &t = *g.value(consts.at(idx - base)).constant;
    return ConstView{t.as<float>(), t.shape};
  };
  return r;
}

class VitisAiBackend : public Backend {
 public:
  explicit VitisAiBackend(std::vector<std::string> samples) : samples_(std::move(samples)) {}
  std::string name() const override { return "vitis_ai"; }
  std::vector<SupportRule> rules() const override { return vitis_ai_rules(); }
  // AOT libraries run the regions with the same glue as disco run
  // (disco_vitis_ai_runtime, registered by vitis_ai_aot_glue.cc), on the
  // portable int8 engine (bit-identical to the Halide one); each region's
  // .xmodel (the step's "xmodel" param, NAME.rN.xmodel) goes beside NAME.a.
  // With XIR and VART the glue links their shared libraries.
  std::optional<AotGlue> aot_glue() const override {
    AotGlue g;
    g.install_function = "disco_install_vitis_ai_glue";
    for (const char *a : {DISCO_VITIS_AI_GLUE_ARCHIVES}) g.archives.push_back(a);
    for (const char *f : {DISCO_VITIS_AI_GLUE_LINK_FLAGS}) g.link_flags.push_back(f);
    g.file_params = {"xmodel"};
    return g;
  }

  Declined compile(const Region &region, PlanBuilder &b) const override {
    const Graph &g = b.graph();
    const Calibration &calib = calibration(g, b.store());
    const std::string rname = "r" + std::to_string(region.id);
    std::string why;
    std::optional<BuiltRegion> built = build_region(g, region, calib, &why);
    std::string xmodel;
    if (built && xir_available()) {
      const std::string file = plan_name(b) + "." + rname + ".xmodel";
      const XirRegion xr = xir_region(g, *built, calib, file);
      why = validate_for_xir(xr);
      if (why.empty()) {
        try {
          emit_xmodel(xr, b.dir() + "/" + file);  // checks XIR's inferred shapes against disco's
          xmodel = file;
        } catch (const Error &e) {
          why = e.what();
        }
      }
      if (xmodel.empty()) built.reset();
    }
    if (!built) return {region.nodes, why};
    PlanStep step;
    step.extern_call = "vitis_ai.region";
    step.label = "vitis_ai " + rname + " (" + g.nodes[region.nodes.front()].name + " .. " +
                 g.nodes[region.nodes.back()].name + ")";
    for (const std::string &sym : region.symbols) step.symbols.push_back(Dim::symbol(sym));
    for (int vid : region.inputs) step.inputs.push_back(b.input_buffer(vid));
    for (int vid : built->const_values) step.inputs.push_back(b.input_buffer(vid));
    for (int vid : region.outputs) step.outputs.push_back(b.output_buffer(vid));
    step.params["program"] = serialize_program(built->program);
    if (!xmodel.empty()) step.params["xmodel"] = xmodel;
    b.progress("vitis_ai.region " + rname + ": " + std::to_string(built->program.ops.size()) + " int8 ops" +
               (xmodel.empty() ? "" : ", " + xmodel));
    b.add_step(std::move(step));
    return {};
  }

  std::string describe(const Graph &g, const ShapeStore &store, const std::vector<Region> &regions) const override {
    std::ostringstream os;
    for (const Region &region : regions) {
      if (region.backend != name()) continue;
      const Calibration &calib = calibration(g, store);
      os << "vitis_ai region r" << region.id << " (int8, calibrated on " << calib.source << "):\n";
      std::string why;
      const auto built = build_region(g, region, calib, &why);
      if (!built) {
        os << "  goes back to the next backend: " << why << "\n";
        continue;
      }
      const QProgram &p = built->program;
      for (int s = 0; s < p.num_inputs; ++s)
        os << "  input " << g.value(built->slot_values[s]).name << ": fix " << p.fix[s] << "\n";
      for (const QOp &op : p.ops) {
        os << "  " << unit_kind_name(op.kind) << " " << op.label << ": ";
        if (op.kind == UnitKind::Conv || op.kind == UnitKind::Gemm)
          os << "weights fix " << op.wfix << ", bias fix " << op.bfix << ", ";
        os << "output fix " << p.fix[op.out] << "\n";
      }
    }
    return os.str();
  }

 private:
  // One calibration per graph: every region of a compile shares it.
  const Calibration &calibration(const Graph &g, const ShapeStore &store) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!calib_ || calib_graph_ != &g) calib_ = calibrate(g, store, samples_), calib_graph_ = &g;
    return *calib_;
  }
  const std::vector<std::string> samples_;
  mutable std::mutex mu_;
  mutable std::optional<Calibration> calib_;
  mutable const Graph *calib_graph_ = nullptr;
};

}  // namespace

void install_vitis_ai_runtime() {
  // disco run has Halide: its JIT-compiled pipelines are the faster engine.
  vitis_ai::set_int8_engine(&vitis_ai::halide_int8_engine());
  vitis_ai::install_region_kernel();
}

std::unique_ptr<Backend> make_vitis_ai_backend(std::vector<std::string> calibration_samples) {
  return std::make_unique<VitisAiBackend>(std::move(calibration_samples));
}

}  // namespace disco
