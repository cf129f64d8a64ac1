#include "schedules/x86_conv_schedule.h"

#include "schedules/x86_schedule.h"

namespace disco {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

bool schedule_x86_conv(LoweredKernel &k, const ConvExtents &e, const Halide::Target &target, ScheduleReport *rep) {
  std::optional<ProductKernel> found = find_product_kernel(k, StageKind::ConvInput, 3);
  if (!found) return false;
  Func y = found->out, p = found->sum, xp = found->operand;
  const int lanes = vector_lanes(Halide::Float(32), target);
  const int cols = kConvVectors * lanes;
  const int channels = lanes >= 16 ? 2 * kConvChannels : kConvChannels;
  const int rank = y.dimensions();

  // Branches, then the generic one: "tiles" (kConvVectors vectors wide),
  // "narrow" (one vector wide: the small maps of a network's late layers),
  // "masked" (narrower than a vector: one masked vector; the sums are
  // computed a whole vector wide, their input being zero past the map).
  const std::vector<int> widths{cols, lanes, lanes};  // of a micro-tile, in floats
  const std::vector<TemplateBranch> branches{
      {"tiles", e.width.expr >= cols && e.channels.expr >= channels,
       e.width.at_least(cols) && e.channels.at_least(channels), e.width.below(cols) || e.channels.below(channels)},
      {"narrow", e.width.expr >= lanes && e.channels.expr >= channels,
       e.width.at_least(lanes) && e.channels.at_least(channels), e.width.below(lanes) || e.channels.below(channels)},
      {"masked", e.width.expr < lanes && e.channels.expr >= channels,
       e.width.below(lanes) && e.channels.at_least(channels), e.width.at_least(lanes) || e.channels.below(channels)}};
  const size_t masked = 2;

  std::vector<Var> a = y.args();
  Var x = a[0], co = a[rank - 2];
  Var xo(x.name() + "_to"), xi(x.name() + "_ti"), coo(co.name() + "_to"), coi(co.name() + "_ti"), task("conv_task");
  // Rows (every dim but width and channels) are tasks; a 1-D Conv has none
  // but the batch, so its channel blocks are tasks too.
  std::vector<Var> rows(a.begin() + 1, a.end() - 2);
  auto tasks = [&](Halide::Stage s, int width, TailStrategy tail, TailStrategy x_tail) {
    s.split(x, xo, xi, width, x_tail).split(co, coo, coi, channels, tail);
    std::vector<VarOrRVar> order{xi, coi, xo, coo};
    for (const auto &r : rows) order.push_back(r);
    order.push_back(a.back());
    s.reorder(order);
    std::vector<Var> outer = rows.empty() ? std::vector<Var>{coo} : rows;
    outer.push_back(a.back());
    s.rename(fuse_range(s, outer, 0, outer.size()), task).parallel(task);
    s.vectorize(xi, lanes, x_tail == TailStrategy::ShiftInwards ? TailStrategy::Auto : x_tail);
    if (tail == TailStrategy::ShiftInwards) s.unroll(coi);  // the channels, not the width, decide
  };

  // The micro-tile's sums over every input channel and tap.
  std::vector<Var> pa = p.args();
  auto micro = [&](Halide::Stage init, Halide::Stage update, bool tiled) {
    TailStrategy tail = tiled ? TailStrategy::RoundUp : TailStrategy::GuardWithIf;
    init.vectorize(pa[0], lanes, tail);
    std::vector<VarOrRVar> order{pa[0], pa[rank - 2]};
    for (const auto &r : p.rvars(0)) order.push_back(r);
    for (int i = 1; i < rank - 2; ++i) order.push_back(pa[i]);
    order.push_back(pa[rank - 1]);
    update.reorder(order).vectorize(pa[0], lanes, tail);
    if (tiled) {
      init.unroll(pa[0]).unroll(pa[rank - 2]);
      update.unroll(pa[0]).unroll(pa[rank - 2]);
    }
  };
  const bool proven = schedule_branches(branches, rep, [&](size_t i, const auto &in) {
    tasks(in(y), widths[i], TailStrategy::ShiftInwards,
          i == masked ? TailStrategy::GuardWithIf : TailStrategy::ShiftInwards);
    micro(in(p), in(p.update(0)), true);
  });
  if (!proven) {
    tasks(y, cols, TailStrategy::GuardWithIf, TailStrategy::GuardWithIf);
    micro(p, p.update(0), false);
  }
  p.compute_at(y, xo);
  // The padded input rows the task reads, copied once per task.
  xp.compute_at(y, task).vectorize(xp.args()[0], lanes, TailStrategy::GuardWithIf);
  rep->template_name = "conv";
  return true;
}

}  // namespace disco
