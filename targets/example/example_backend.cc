// The example Backend: its name, its rules, its minimum region size, and
// compile(), which turns each unit of a region into one extern plan step that
// the runtime glue (example_runtime.cc) runs.
#include "targets/example/example_backend.h"

#include "runtime/extern_kernel.h"
#include "targets/example/example_rules.h"
#include "targets/partitioner.h"
#include "targets/plan_builder.h"

namespace disco {
namespace {

// One unit (Conv or Add, maybe with its Relu) becomes one step: it reads the
// anchor's inputs and writes the unit's last output. What the rule matched
// (ExampleUnit) comes with the unit: nothing is matched again here.
PlanStep unit_step(const ExampleUnit &u, const Region &region, PlanBuilder &b) {
  const Graph &g = b.graph();
  PlanStep step;
  step.extern_call = u.conv ? "example.conv" : "example.add";
  for (int n : u.nodes) step.label += (step.label.empty() ? "" : " + ") + g.nodes[n].name;
  for (const std::string &sym : region.symbols) step.symbols.push_back(Dim::symbol(sym));
  step.params["relu"] = u.relu ? "1" : "0";
  if (u.conv) {
    step.params["strides"] = join_ints(u.strides);
    step.params["dilations"] = join_ints(u.dilations);
    step.params["pads"] = join_ints(u.pads);
  }
  for (int vid : g.nodes[u.nodes.front()].inputs) step.inputs.push_back(vid < 0 ? -1 : b.input_buffer(vid));
  step.outputs.push_back(b.output_buffer(g.nodes[u.nodes.back()].outputs[0]));
  return step;
}

class ExampleBackend : public Backend {
 public:
  std::string name() const override { return "example"; }
  std::vector<SupportRule> rules() const override { return example_rules(); }
  // AOT libraries call the same glue as disco run: example_runtime.cc's
  // kernels, registered by the C function of example_aot_glue.cc, from the
  // archives the build made (their members go into NAME.a).
  std::optional<AotGlue> aot_glue() const override {
    AotGlue g;
    g.install_function = "disco_install_example_glue";
    for (const char *a : {DISCO_EXAMPLE_GLUE_ARCHIVES}) g.archives.push_back(a);
    g.link_flags = {"-lstdc++"};
    return g;
  }
  // Every region is a hand-over: the inputs go to the accelerator and the
  // outputs come back. A lone op (an Add, or a Conv without its Relu) moves as
  // many bytes as it works on, and the host would have fused it into a
  // neighbouring kernel for free, so a region must hold at least two nodes;
  // smaller ones go back to the host.
  int min_region_nodes() const override { return 2; }
  // Units come sorted by anchor, in graph order, and only an anchor reads from
  // outside its unit, so this order writes every value before a step reads it.
  // A backend that cannot compile some units after all (a device limit only
  // codegen finds) returns their nodes instead, adding no steps: the
  // partitioner gives them to the next backend.
  Declined compile(const Region &region, PlanBuilder &b) const override {
    add_unit_steps(region.units, b, "",
                   [&](const Unit &unit) { return unit_step(unit.payload_as<ExampleUnit>(), region, b); });
    return {};
  }
};

}  // namespace

std::unique_ptr<Backend> make_example_backend() { return std::make_unique<ExampleBackend>(); }

}  // namespace disco
