// The example Backend: its name, its rules, its minimum region size, and
// compile(), which turns each unit of a region into one extern plan step that
// the runtime glue (example_runtime.cc) runs.
#include "targets/example/example_backend.h"

#include "frontend/attributes.h"
#include "runtime/extern_kernel.h"
#include "targets/example/example_rules.h"
#include "targets/partitioner.h"
#include "targets/plan_builder.h"

namespace disco {
namespace {

// Conv's geometry as params, with the ONNX defaults filled in; VALID means no
// padding (explicit pads are then ignored, as onnxruntime does).
void conv_params(const Node &conv, PlanStep &step) {
  const AttrReader a(conv.attrs, conv.where());
  const bool valid = a.get_string("auto_pad", "NOTSET") == "VALID";
  step.params["strides"] = join_ints(a.get_ints_opt("strides").value_or(std::vector<int64_t>{1, 1}));
  step.params["dilations"] = join_ints(a.get_ints_opt("dilations").value_or(std::vector<int64_t>{1, 1}));
  step.params["pads"] = valid ? "0,0,0,0" : join_ints(a.get_ints_opt("pads").value_or(std::vector<int64_t>(4, 0)));
}

// One unit (Conv or Add, maybe with its Relu) becomes one step: it reads the
// anchor's inputs and writes the unit's last output.
PlanStep unit_step(const Unit &unit, const Region &region, PlanBuilder &b) {
  const Graph &g = b.graph();
  const Node &anchor = g.nodes[unit.nodes.front()];
  PlanStep step;
  step.extern_call = anchor.op_type == "Conv" ? "example.conv" : "example.add";
  for (int n : unit.nodes) step.label += (step.label.empty() ? "" : " + ") + g.nodes[n].name;
  step.symbols = region.symbols;
  step.params["relu"] = unit.nodes.size() > 1 ? "1" : "0";
  if (anchor.op_type == "Conv") conv_params(anchor, step);
  for (int vid : anchor.inputs) step.inputs.push_back(vid < 0 ? -1 : b.input_buffer(vid));
  step.outputs.push_back(b.output_buffer(g.nodes[unit.nodes.back()].outputs[0]));
  return step;
}

class ExampleBackend : public Backend {
 public:
  std::string name() const override { return "example"; }
  std::vector<SupportRule> rules() const override { return example_rules(); }
  // Every region is a hand-over: the inputs go to the accelerator and the
  // outputs come back. A lone op (an Add, or a Conv without its Relu) moves as
  // many bytes as it works on, and the host would have fused it into a
  // neighbouring kernel for free, so a region must hold at least two nodes;
  // smaller ones go back to the host.
  int min_region_nodes() const override { return 2; }
  // Units come sorted by anchor, in graph order, and only an anchor reads from
  // outside its unit, so this order writes every value before a step reads it.
  void compile(const Region &region, PlanBuilder &b) const override {
    for (const Unit &unit : region.units) {
      PlanStep step = unit_step(unit, region, b);
      b.progress(step.extern_call + " (" + step.label + ")");
      b.add_step(std::move(step));
    }
  }
};

}  // namespace

std::unique_ptr<Backend> make_example_backend() { return std::make_unique<ExampleBackend>(); }

}  // namespace disco
