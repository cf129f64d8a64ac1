#include "schedules/x86_conv_schedule.h"

#include <algorithm>
#include <string>

namespace disco {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

struct ConvFuncs {
  Func out, sum, input;
};

std::optional<ConvFuncs> find_conv(const LoweredKernel &k) {
  if (k.outputs.size() != 1) return std::nullopt;
  ConvFuncs c{k.outputs[0], Func(), Func()};
  if (c.out.outputs() != 1 || c.out.has_update_definition() || c.out.dimensions() < 3 ||
      c.out.output_types()[0] != Halide::Float(32))
    return std::nullopt;
  for (const auto &s : k.stages) {
    if (s.kind == StageKind::Reduction && !c.sum.defined())
      c.sum = s.f;
    else if (s.kind == StageKind::ConvInput && !c.input.defined())
      c.input = s.f;
    else
      return std::nullopt;
  }
  if (!c.sum.defined() || !c.input.defined()) return std::nullopt;
  const int rank = c.out.dimensions();
  if (c.sum.dimensions() != rank || c.input.dimensions() != rank || c.sum.output_types()[0] != Halide::Float(32) ||
      c.sum.num_update_definitions() != 1 || c.sum.rvars(0).empty() || !update_writes_pure_vars(c.sum, 0))
    return std::nullopt;
  return c;
}

}  // namespace

bool schedule_x86_conv(LoweredKernel &k, const ConvExtents &e, const Halide::Target &target, ScheduleReport *rep) {
  std::optional<ConvFuncs> found = find_conv(k);
  if (!found) return false;
  Func y = found->out, p = found->sum, xp = found->input;
  const int lanes = std::clamp(target.natural_vector_size(Halide::Float(32)), 1, 64);
  const int cols = kConvVectors * lanes;
  const int channels = lanes >= 16 ? 2 * kConvChannels : kConvChannels;
  const int rank = y.dimensions();

  // Branches: "tiles" (kConvVectors vectors wide), "narrow" (one vector
  // wide: the small maps of a network's late layers), then the generic one.
  // "masked" (narrower than a vector: one masked vector; the sums are
  // computed a whole vector wide, their input being zero past the map).
  struct Branch {
    std::string name;
    int width;         // vectors of output width per micro-tile, in floats
    bool masked;       // the width is at most this; otherwise at least
  };
  std::vector<Branch> branches;
  for (const Branch &b : {Branch{"tiles", cols, false}, Branch{"narrow", lanes, false}, Branch{"masked", lanes, true}}) {
    if (!branches.empty() && b.width == branches.back().width && !b.masked) continue;
    branches.push_back(b);
  }
  const bool channels_fit = e.channels_const && *e.channels_const >= channels;
  const bool channels_short = e.channels_const && *e.channels_const < channels;
  auto width_ok = [&](const Branch &b, int64_t w) { return b.masked ? w < b.width : w >= b.width; };
  auto condition = [&](const Branch &b) {
    return (b.masked ? e.width < b.width : e.width >= b.width) && e.channels >= channels;
  };
  auto decided = [&](const Branch &b) { return channels_fit && e.width_const && width_ok(b, *e.width_const); };
  auto impossible = [&](const Branch &b) { return channels_short || (e.width_const && !width_ok(b, *e.width_const)); };

  std::vector<Var> a = y.args();
  Var x = a[0], co = a[rank - 2];
  Var xo(x.name() + "_to"), xi(x.name() + "_ti"), coo(co.name() + "_to"), coi(co.name() + "_ti"), task("conv_task");
  // Rows (every dim but width and channels) are tasks; a 1-D Conv has none
  // but the batch, so its channel blocks are tasks too.
  std::vector<Var> rows(a.begin() + 1, a.end() - 2);
  const bool by_channels = rows.empty();
  auto tasks = [&](Halide::Stage s, int width, TailStrategy tail, TailStrategy x_tail) {
    s.split(x, xo, xi, width, x_tail).split(co, coo, coi, channels, tail);
    std::vector<VarOrRVar> order{xi, coi, xo, coo};
    for (const auto &r : rows) order.push_back(r);
    order.push_back(a.back());
    s.reorder(order);
    std::vector<Var> outer = by_channels ? std::vector<Var>{coo} : rows;
    outer.push_back(a.back());
    Var t = outer.back();
    for (size_t i = outer.size() - 1; i-- > 0;) {
      Var fused(outer[i].name() + "_" + t.name());
      s.fuse(outer[i], t, fused);
      t = fused;
    }
    s.rename(t, task).parallel(task);
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
  bool always = false;  // a branch the store decides: taken alone
  for (const auto &b : branches) {
    if (impossible(b)) continue;
    always = decided(b);
    Halide::Stage ys = always ? Halide::Stage(y) : y.specialize(condition(b));
    tasks(ys, b.width, TailStrategy::ShiftInwards, b.masked ? TailStrategy::GuardWithIf : TailStrategy::ShiftInwards);
    micro(always ? Halide::Stage(p) : p.specialize(condition(b)),
          always ? p.update(0) : p.update(0).specialize(condition(b)), true);
    if (always) break;
    rep->branches.push_back({b.name, condition(b)});
  }
  if (!always) {
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
