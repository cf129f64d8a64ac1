#include "schedules/x86_conv_schedule.h"

#include "schedules/x86_schedule.h"

namespace disco {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

namespace {

// The parallel task loop of both micro-kernels, where the ConvInput copy goes.
constexpr const char *kTaskLoop = "conv_task";

// Rows (every dim but width and channels) are tasks; a 1-D Conv has none
// but the batch, so its channel blocks are tasks too.
void fuse_tasks(Halide::Stage s, const std::vector<Var> &a, const Var &coo) {
  const int rank = static_cast<int>(a.size());
  std::vector<Var> outer = rank == 3 ? std::vector<Var>{coo} : std::vector<Var>(a.begin() + 1, a.end() - 2);
  outer.push_back(a.back());
  const Var task(kTaskLoop);
  s.rename(fuse_range(s, outer, 0, outer.size()), task).parallel(task);
}

// Weights stored channels-last (group 1, lowering/weight_layout.h): the
// micro-kernel is vectorized over output channels instead, kChannelsLastVectors
// vectors of them by kChannelsLastWidth output positions of the width
// (12 of 16 registers with AVX2), each input value a broadcast scalar and
// each weight row one load: no strided loads for strided Convs, and no
// waste on maps narrower than a vector (the 12x12 and 7x7 maps of a
// network's late layers). One branch, "channels" (at least one micro-tile
// of width and channels, edge tiles overlapping), then the guarded generic.
void schedule_channels_last(Func y, Func p, Func xp, const ConvExtents &e, int lanes, ScheduleReport *rep) {
  const int rank = y.dimensions();
  const int cols = kChannelsLastWidth * (lanes >= 16 ? 2 : 1), channels = kChannelsLastVectors * lanes;
  const std::vector<TemplateBranch> branches{
      {"channels", e.width.expr >= cols && e.channels.expr >= channels,
       e.width.at_least(cols) && e.channels.at_least(channels), e.width.below(cols) || e.channels.below(channels)}};
  std::vector<Var> a = y.args();
  Var x = a[0], co = a[rank - 2];
  Var xo(x.name() + "_to"), xi(x.name() + "_ti"), coo(co.name() + "_to"), coi(co.name() + "_ti");
  auto tasks = [&](Halide::Stage s, TailStrategy tail) {
    s.split(x, xo, xi, cols, tail).split(co, coo, coi, channels, tail);
    std::vector<VarOrRVar> order{xi, coi, xo, coo};
    order.insert(order.end(), a.begin() + 1, a.end() - 2);
    order.push_back(a.back());
    s.reorder(order);
    fuse_tasks(s, a, coo);
    s.vectorize(xi, cols, tail == TailStrategy::ShiftInwards ? TailStrategy::Auto : tail);
    if (tail == TailStrategy::ShiftInwards) s.unroll(coi);
  };
  // Sums stored channels-innermost: the micro-tile's vectors are dense.
  std::vector<Var> pa = p.args();
  std::vector<Var> storage{pa[rank - 2], pa[0]};
  storage.insert(storage.end(), pa.begin() + 1, pa.end() - 2);
  storage.push_back(pa.back());
  p.reorder_storage(storage);
  auto micro = [&](Halide::Stage init, Halide::Stage update, bool tiled) {
    TailStrategy tail = tiled ? TailStrategy::RoundUp : TailStrategy::GuardWithIf;
    init.reorder(pa[rank - 2], pa[0]).vectorize(pa[rank - 2], lanes, tail);
    // Taps innermost: the weight rows and the input walk forward.
    std::vector<VarOrRVar> order{pa[rank - 2], pa[0]};
    const auto rv = p.rvars(0);
    for (auto r = rv.rbegin(); r != rv.rend(); ++r) order.push_back(*r);
    for (int i = 1; i < rank - 2; ++i) order.push_back(pa[i]);
    order.push_back(pa[rank - 1]);
    update.reorder(order).vectorize(pa[rank - 2], lanes, tail);
    if (tiled) {
      init.unroll(pa[rank - 2]).unroll(pa[0]);
      update.unroll(pa[rank - 2]).unroll(pa[0]);
    }
  };
  const bool proven = schedule_branches(branches, rep, [&](size_t, const auto &in) {
    tasks(in(y), TailStrategy::ShiftInwards);
    micro(in(p), in(p.update(0)), true);
  });
  if (!proven) {
    tasks(y, TailStrategy::GuardWithIf);
    micro(p, p.update(0), false);
  }
  p.compute_at(y, xo);
  xp.compute_at(y, Var(kTaskLoop)).vectorize(xp.args()[0], lanes, TailStrategy::GuardWithIf);
  rep->template_name = "conv";
}

}  // namespace

bool schedule_x86_conv(LoweredKernel &k, const ConvExtents &e, const Halide::Target &target, ScheduleReport *rep) {
  std::optional<ProductKernel> found = find_product_kernel(k, StageKind::ConvInput, 3);
  if (!found) return false;
  Func y = found->out, p = found->sum, xp = found->operand.f;
  const int lanes = vector_lanes(Halide::Float(32), target);
  if (found->operand.channels_last_weights) {
    schedule_channels_last(y, p, xp, e, lanes, rep);
    return true;
  }
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
  Var xo(x.name() + "_to"), xi(x.name() + "_ti"), coo(co.name() + "_to"), coi(co.name() + "_ti");
  std::vector<Var> rows(a.begin() + 1, a.end() - 2);
  auto tasks = [&](Halide::Stage s, int width, TailStrategy tail, TailStrategy x_tail) {
    s.split(x, xo, xi, width, x_tail).split(co, coo, coi, channels, tail);
    std::vector<VarOrRVar> order{xi, coi, xo, coo};
    for (const auto &r : rows) order.push_back(r);
    order.push_back(a.back());
    s.reorder(order);
    fuse_tasks(s, a, coo);
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
  xp.compute_at(y, Var(kTaskLoop)).vectorize(xp.args()[0], lanes, TailStrategy::GuardWithIf);
  rep->template_name = "conv";
  return true;
}

}  // namespace disco
