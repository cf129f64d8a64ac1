#include "schedules/x86_schedule.h"

#include <sstream>

namespace disco {

namespace {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

int vector_lanes(const Halide::Type &t, const Halide::Target &target) {
  int bytes = target.has_feature(Halide::Target::AVX512) ? 64 : 32;
  return std::max(1, bytes / std::max(1, t.bytes()));
}

// The update writes f(args...) with exactly the pure vars, so its pure loops
// can be split and parallelized like the pure definition's.
bool update_writes_pure_vars(const Func &f, int u) {
  auto lhs = f.update_args(u);
  auto pure = f.args();
  if (lhs.size() != pure.size()) return false;
  for (size_t i = 0; i < lhs.size(); ++i) {
    std::ostringstream os;
    os << lhs[i];
    if (os.str() != pure[i].name()) return false;
  }
  return true;
}

void schedule_pure(Func f, int lanes, bool parallel) {
  auto args = f.args();
  if (args.empty()) return;
  if (lanes > 1) f.vectorize(args[0], lanes, TailStrategy::GuardWithIf);
  if (!parallel || args.size() < 2) return;
  Var outer = args.back();
  for (size_t i = args.size() - 1; i-- > 1;) {
    Var fused(outer.name() + "_" + args[i].name());
    f.fuse(outer, args[i], fused);
    outer = fused;
  }
  f.parallel(outer);
}

void schedule_updates(Func f, int lanes, bool parallel) {
  auto args = f.args();
  for (int u = 0; u < f.num_update_definitions(); ++u) {
    if (args.empty() || !update_writes_pure_vars(f, u)) {
      f.update(u).unscheduled();  // scatter-like updates keep Halide's default order
      continue;
    }
    auto stage = f.update(u);
    std::vector<VarOrRVar> order;
    Var inner_o(args[0].name() + "_vo"), inner_i(args[0].name() + "_vi");
    if (lanes > 1) {
      stage.split(args[0], inner_o, inner_i, lanes, TailStrategy::GuardWithIf);
      order.push_back(inner_i);
    }
    for (const auto &r : f.rvars(u)) order.push_back(r);
    order.push_back(lanes > 1 ? inner_o : args[0]);
    for (size_t i = 1; i < args.size(); ++i) order.push_back(args[i]);
    stage.reorder(order);
    if (lanes > 1) stage.vectorize(inner_i);
    if (parallel && args.size() >= 2) stage.parallel(args.back());
  }
}

}  // namespace

void schedule_x86(LoweredKernel &k, const Halide::Target &target) {
  for (auto &s : k.stages) {
    s.f.compute_root();
    schedule_pure(s.f, 1, true);
    schedule_updates(s.f, 1, true);
  }
  for (auto &f : k.outputs) {
    int lanes = vector_lanes(f.output_types()[0], target);
    schedule_pure(f, lanes, true);
    schedule_updates(f, lanes, true);
  }
}

}  // namespace disco
