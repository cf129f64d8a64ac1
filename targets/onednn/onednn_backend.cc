#include "targets/onednn/onednn_backend.h"

#include <algorithm>

#include "frontend/errors.h"
#include "runtime/extern_kernel.h"
#include "targets/onednn/onednn_rules.h"
#include "targets/partitioner.h"
#include "targets/plan_builder.h"

namespace disco {

namespace {

std::string unit_label(const Graph &g, const OnednnUnit &u) {
  std::string s;
  for (int n : u.nodes) s += (s.empty() ? "" : " ") + g.nodes[n].name;
  return s;
}

// One extern step per unit. Inputs: the anchor's operands, then the operands
// of the binary post-ops in list order. Output: the unit's last value (its
// intermediates each have one reader, inside the unit).
PlanStep unit_step(const OnednnUnit &u, const Region &region, PlanBuilder &b) {
  PlanStep step;
  step.label = unit_label(b.graph(), u);
  step.symbols = region.symbols;
  step.params["post_ops"] = post_ops_to_string(u.post_ops);
  if (u.anchor == OnednnUnit::Conv) {
    step.extern_call = "onednn.conv";
    step.params["strides"] = join_ints(u.strides);
    step.params["dilations"] = join_ints(u.dilations);
    step.params["pads"] = join_ints(u.pads);
    step.params["group"] = std::to_string(u.group);
    step.params["auto_pad"] = u.auto_pad;
  } else {
    step.extern_call = "onednn.matmul";
    step.params["trans_a"] = u.trans_a ? "1" : "0";
    step.params["trans_b"] = u.trans_b ? "1" : "0";
    auto add_view = [&](const std::string &x, const OperandView &v) {
      if (!v.present()) return;
      step.params[x + "_perm"] = join_ints(v.perm);
      step.params[x + "_reshape"] = join_tokens(v.reshape);
    };
    add_view("a", u.a_view);
    add_view("b", u.b_view);
    if (!u.out_perm.empty()) {
      step.params["out_perm"] = join_ints(u.out_perm);
      step.params["out_reshaped"] = u.out_reshaped ? "1" : "0";
    }
  }
  for (int vid : u.anchor_inputs) step.inputs.push_back(vid < 0 ? -1 : b.input_buffer(vid));
  for (int vid : u.operands) step.inputs.push_back(b.input_buffer(vid));
  step.outputs.push_back(b.output_buffer(u.output));
  return step;
}

class OnednnBackend : public Backend {
 public:
  std::string name() const override { return "onednn"; }
  std::vector<SupportRule> rules() const override { return onednn_rules(); }
  int min_region_nodes() const override { return 1; }

  void compile(const Region &region, PlanBuilder &b) const override {
    MatchContext ctx(b.graph(), b.store());
    // A unit's epilogue may read the result of a later-anchored unit (a
    // residual branch), so steps go in the order of each unit's last node.
    std::vector<Unit> units = region.units;
    auto last = [](const Unit &u) { return *std::max_element(u.nodes.begin(), u.nodes.end()); };
    std::sort(units.begin(), units.end(), [&](const Unit &x, const Unit &y) { return last(x) < last(y); });
    for (const Unit &unit : units) {
      std::string why;
      auto u = match_onednn_unit(ctx, unit.nodes.front(), &why);
      DISCO_CHECK(u && u->nodes == unit.nodes, "internal: oneDNN unit at ", b.graph().nodes[unit.nodes.front()].where(),
                  " no longer matches", why.empty() ? "" : ": " + why);
      PlanStep step = unit_step(*u, region, b);
      b.progress("onednn step " + step.extern_call + " (" + step.label + ")");
      b.add_step(std::move(step));
    }
  }
};

}  // namespace

std::unique_ptr<Backend> make_onednn_backend() { return std::make_unique<OnednnBackend>(); }

}  // namespace disco
