#include "targets/host/host_backend.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "frontend/errors.h"
#include "lowering/op_registry.h"
#include "lowering/recurrent_weight_layout.h"
#include "lowering/weight_layout.h"
#include "schedules/fusion.h"
#include "schedules/x86_conv_schedule.h"
#include "schedules/x86_dot_schedule.h"
#include "schedules/x86_recurrent_schedule.h"
#include "schedules/x86_schedule.h"
#include "targets/host/host_codegen.h"
#include "targets/host/kernel_key.h"
#include "targets/host/shape_pattern.h"
#include "targets/partitioner.h"
#include "targets/plan_builder.h"

namespace disco {

namespace {

std::string group_label(const Graph &g, const FusionGroup &gr) {
  std::string s = group_kind_name(gr.kind);
  s += ":";
  for (int n : gr.nodes) s += " " + g.nodes[n].name;
  if (gr.nodes.empty()) s += " " + g.value(gr.outputs[0]).name;
  return s;
}

bool has_symbol(const ShapeStore &store, const Shape &s) {
  for (const Dim &d : s)
    if (!store.canonical(d).is_const()) return true;
  return false;
}

// A group's kernel, its schedule and key, and what the plan step passes for
// each symbol the kernel takes: the extent a pattern's parameter stands for,
// or the model's symbol itself.
struct KeyedKernel {
  LoweredKernel k;
  ScheduleReport sched;
  std::string key;
  std::vector<Dim> args;
};

// Lowers, schedules and keys `gr` over `pattern` or, when null, over the
// model's graph and store.
KeyedKernel lower_group(const FusionGroup &gr, PlanBuilder &b, const GroupScheduler &schedule,
                        const ShapePattern *pattern) {
  const Graph &g = pattern ? pattern->graph() : b.graph();
  const ShapeStore &store = pattern ? pattern->store() : b.store();
  const Halide::Target target = parse_target(b.target());
  KeyedKernel r;
  r.k = lower_nodes(g, store, gr.nodes, gr.outputs, /*constants_as_inputs=*/true,
                    vector_lanes(Halide::Float(32), target));
  r.sched = schedule(r.k, gr.kind, store, target);
  std::vector<std::string> used;
  for (const auto &[sym, p] : r.k.syms.used()) {
    used.push_back(sym);
    r.args.push_back(pattern ? pattern->extent(sym) : Dim::symbol(sym));
  }
  r.key = kernel_key(g, store, gr, r.k, pattern != nullptr, pattern ? pattern->params() : used, r.sched.describe(),
                     b.target());
  return r;
}

void compile_group(const FusionGroup &gr, PlanBuilder &b, const GroupScheduler &schedule) {
  const Graph &g = b.graph();
  PlanStep step;
  step.label = group_label(g, gr);
  if (gr.kind == GroupKind::Host) {
    const Node &node = g.nodes[gr.nodes.at(0)];
    b.progress("host op " + node.op_type + " (" + step.label + ")");
    step.host_op = node.op_type;
    for (const auto &[name, a] : node.attrs)
      if (a.kind == Attribute::Int) step.host_attrs[name] = a.i;
    for (int vid : node.inputs) step.inputs.push_back(vid < 0 ? -1 : b.input_buffer(vid));
    for (int vid : node.outputs) {
      // Outputs whose extents hold symbols are written even when no kernel reads
      // them: those extents bind the symbols (disco::RunTimeDims's outputs 1..n
      // exist only for that; lowering/ops/run_time_dims.cc).
      bool binds = vid >= 0 && has_symbol(b.store(), *g.value(vid).shape);
      bool used = vid >= 0 && (binds || std::find(gr.outputs.begin(), gr.outputs.end(), vid) != gr.outputs.end());
      step.outputs.push_back(used ? b.output_buffer(vid) : -1);
    }
    b.add_step(std::move(step));
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // Over the group's shape pattern, so that groups that differ only in their
  // extents, or in the names of the model's symbols, share a kernel.
  std::optional<KeyedKernel> lowered;
  {
    ShapePattern pattern(b.scratch_graph(), g, b.store(), gr);
    if (pattern.applies()) {
      try {
        lowered = lower_group(gr, b, schedule, &pattern);
      } catch (const std::exception &e) {  // then over the model's symbols, which fails alike if the group cannot lower
        b.progress("  " + step.label + " over the model's symbols, not its shape pattern: " + e.what());
      }
    }
  }
  if (!lowered) lowered = lower_group(gr, b, schedule, nullptr);
  b.profile().lower_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const LoweredKernel &k = lowered->k;
  const ScheduleReport &sched = lowered->sched;
  const std::string &key = lowered->key;
  for (int vid : k.input_values) step.inputs.push_back(b.input_buffer(vid));
  step.symbols = lowered->args;
  for (int vid : k.output_values) step.outputs.push_back(b.output_buffer(vid, gr.kind != GroupKind::Copy));
  ++b.profile().kernels;
  // A group with the same ops, shape pattern, read values and schedule as an
  // earlier one calls that kernel with its own buffers and extents.
  if (auto same = b.kernel_for(key)) {
    step.kernel = *same;
    b.progress("kernel " + step.kernel + " again (" + step.label + ")");
    b.add_step(std::move(step));
    return;
  }
  step.kernel = b.new_kernel_name(key);
  b.progress("kernel " + step.kernel + " (" + step.label + ")");
  b.progress("  schedule " + sched.describe());
  const std::string obj = b.dir() + "/" + step.kernel + ".o";
  const Halide::Target target = parse_target(b.target());
  b.add_kernel(key, {step.kernel, obj, [k = lowered->k, name = step.kernel, obj, target](CompileProfile &p) mutable {
                       compile_kernel_object(k, name, obj, target, &p);
                     }});
  b.add_step(std::move(step));
}

class HostBackend : public Backend {
 public:
  std::string name() const override { return "host"; }
  // Halide kernels alone, their parallel loops on OpenMP as in disco run
  // (runtime/openmp_par_for.h): Halide's own pool was up to 1.12x disco run's
  // time at 2 threads (benchmarks/results/aot-vs-jit-2026-12-02.md), and a
  // library with oneDNN regions shares the one pool.
  std::optional<AotGlue> aot_glue() const override {
    AotGlue g;
    g.archives = {DISCO_HOST_GLUE_ARCHIVE};
    g.link_flags = {"-lgomp"};
    g.par_for_function = "disco_openmp_do_par_for";
    g.par_for_threads_function = "disco_openmp_set_par_for_threads";
    return g;
  }
  std::vector<SupportRule> rules() const override {
    return {{"lowerable", {}, [](const MatchContext &ctx, int node) {
               const Node &n = ctx.node(node);
               if (!OpRegistry::global().find(n.domain, n.op_type, n.opset))
                 return decline("no lowering for this op and opset");
               return take({node});
             }}};
  }
  // Constant dot weights packed in the panels the x86 dot template reads;
  // constant Conv weights channels-last where there are enough output
  // channels for the conv template's channel vectors and enough input
  // channels (kChannelsLastMinInputs); constant RNN/GRU/LSTM weights
  // gate-major (recurrent_weight_layout.h).
  void prepare_region(Graph &g, Region &region, const std::string &target) const override {
    const Halide::Target t = parse_target(target);
    for (int vid : pack_dot_weights(g, region.nodes, [&](int64_t n) { return dot_panel_width(n, t); }))
      region.inputs.push_back(vid);
    const int lanes = vector_lanes(Halide::Float(32), t);
    const int64_t outputs = channels_last_min_outputs(lanes);
    auto wanted = [&](int64_t m, int64_t c) { return m >= outputs && c >= kChannelsLastMinInputs; };
    for (int vid : channels_last_conv_weights(g, region.nodes, wanted))
      region.inputs.push_back(vid);
    const int panel = recurrent_projection_vectors(t) * lanes;  // the recurrent template's projection tile
    for (int vid : transpose_recurrent_weights(g, region.nodes, panel)) region.inputs.push_back(vid);
  }
  Declined compile(const Region &region, PlanBuilder &b) const override {
    compile_region_groups(region, b, schedule_x86);
    return {};
  }
  void compile_output_copy(int vid, PlanBuilder &b) const override {
    compile_group({GroupKind::Copy, {}, {vid}}, b, schedule_x86);
  }
  void write_runtime_object(const std::string &target, const std::string &path) const override {
    compile_runtime_object(path, parse_target(target));
  }
  void link_kernel_library(const std::vector<std::string> &objects, const std::string &path) const override {
    link_shared_library(objects, path);
  }
};

}  // namespace

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

void compile_region_groups(const Region &region, PlanBuilder &b, const GroupScheduler &schedule) {
  for (const FusionGroup &gr : plan_region_fusion(b.graph(), b.store(), region.nodes)) compile_group(gr, b, schedule);
}

}  // namespace disco
