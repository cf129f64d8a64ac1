#include "schedules/x86_conv_schedule.h"

#include "schedules/x86_schedule.h"

namespace disco {

using Halide::Expr;
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
// vectors of them by kChannelsLastWidth output positions (12 of 16 registers
// with AVX2), each input value a broadcast scalar and each weight row one
// load: no strided loads for strided Convs. The sum is over flattened output
// positions (lowering/ops/window.h flat_domain), so a micro-tile's positions
// may span rows: a 7x7 map is 49 positions in 9 tiles, not 7 rows of two
// overlapping 6-position tiles each (58% of the work useful).
// Each task computes `sums`, its positions by its channels (a wrapper of the
// sum stage, positions innermost), micro-tile by micro-tile; the output then
// reads it with the epilogue. Branches, then the guarded generic:
//  - "map": maps of at most kMapPositions positions (and every 1-D Conv):
//    a task is one image by one micro-tile of channels, every position;
//  - "rows wide": as "rows", with micro-tiles 7/6 as wide (28 of AVX-512's
//    32 registers), where that computes fewer positions of a row: a
//    28-wide row is two tiles of 14 instead of three of 12 overlapping
//    (36 positions for 28), and so are the 14-, 56- and 112-wide rows of
//    ResNet-like nets. Its blocks.0 Convs of convnet at 3x3x40x56 (rows of
//    28) took 26.9 against 34-36 ms per 40 runs with 12-wide tiles;
//  - "rows": a task is one output row, every channel.
// Edge tiles overlap instead of having tails.
void schedule_channels_last(Func y, Func p, Func xp, const ConvExtents &e, int lanes, ScheduleReport *rep) {
  const int rank = y.dimensions();
  const int vectors = channels_last_vectors(e.channels.value.value_or(kChannelsLastVectors * lanes), lanes);
  const int tile = kChannelsLastWidth * (lanes >= 16 ? 2 : 1) * (kChannelsLastVectors / vectors);
  // AVX-512 has registers for 7/6 of the sums (16 registers of AVX2 do not).
  const int wide = lanes >= 16 ? tile * 7 / 6 : 0;
  const int channels = vectors * lanes;
  const bool has_rows = rank > 3;
  Expr map_condition = e.positions.expr >= tile && e.channels.expr >= channels;
  if (has_rows) map_condition = map_condition && e.positions.expr <= kMapPositions;
  const bool small_known = !has_rows || (e.positions.value && *e.positions.value <= kMapPositions);
  const bool large_known = has_rows && e.positions.value && *e.positions.value > kMapPositions;
  std::vector<TemplateBranch> branches{
      {"map", map_condition,
       e.positions.at_least(tile) && small_known && e.channels.at_least(channels),
       e.positions.below(tile) || large_known || e.channels.below(channels)}};
  // The positions a row of `w` computes in tiles of `t` (an Expr, or a known width).
  auto covered = [](const auto &w, int t) { return (w + (t - 1)) / t * t; };
  const bool has_wide = has_rows && wide > 0;
  if (has_wide) {
    Expr fits = e.width.expr >= wide && e.channels.expr >= channels;
    const std::optional<int64_t> &w = e.width.value;
    const bool wins = w && covered(*w, wide) < covered(*w, tile);
    branches.push_back({"rows wide", fits && covered(e.width.expr, wide) < covered(e.width.expr, tile),
                        wins && e.width.at_least(wide) && e.channels.at_least(channels),
                        (w && !wins) || e.width.below(wide) || e.channels.below(channels)});
  }
  if (has_rows)
    branches.push_back({"rows", e.width.expr >= tile && e.channels.expr >= channels,
                        e.width.at_least(tile) && e.channels.at_least(channels),
                        e.width.below(tile) || e.channels.below(channels)});
  const size_t map = 0;

  // The output's loops. The sums are computed at the loop `at`: a map's
  // every position ("map": `at` has one iteration, just inside the task
  // loop), or one micro-tile of a row ("rows"), which the sums then hold in
  // registers for the output to read. One name in both, as compute_at needs.
  std::vector<Var> a = y.args();
  Var x = a[0], co = a[rank - 2];
  Var coo(co.name() + "_to"), coi(co.name() + "_ti"), xi(x.name() + "_ti"), inner(co.name() + "_tj");
  const Var task(kTaskLoop), at("conv_tile");
  auto tasks = [&](Halide::Stage s, bool by_image, int width, TailStrategy tail) {
    std::vector<Var> outer;
    s.split(co, coo, coi, channels, tail);
    if (by_image) {
      s.split(coi, at, inner, channels, tail);
      std::vector<VarOrRVar> order(a.begin(), a.end() - 2);
      for (const Var &v : {inner, at, coo, a.back()}) order.push_back(v);
      s.reorder(order).vectorize(x, lanes, TailStrategy::GuardWithIf);
      outer = {coo, a.back()};
    } else {
      s.split(x, at, xi, width, tail);
      std::vector<VarOrRVar> order{xi, coi, at, coo};
      order.insert(order.end(), a.begin() + 1, a.end() - 2);
      order.push_back(a.back());
      s.reorder(order).vectorize(xi, width, tail == TailStrategy::ShiftInwards ? TailStrategy::Auto : tail);
      if (tail == TailStrategy::ShiftInwards) s.unroll(coi);
      outer.assign(a.begin() + 1, a.end() - 2);
      outer.push_back(a.back());
    }
    s.rename(fuse_range(s, outer, 0, outer.size()), task).parallel(task);
  };
  // The sums at `at`, positions by channels, micro-tile by micro-tile.
  Func sums = p.in();  // y may read p through inlined Funcs (the Conv output, an activation)
  std::vector<Var> qa = sums.args();  // [s, m, n]
  Var so(qa[0].name() + "_to"), si(qa[0].name() + "_ti"), mo(qa[1].name() + "_to"), mi(qa[1].name() + "_ti");
  sums.reorder_storage(qa[1], qa[0], qa[2]);
  auto tiles = [&](Halide::Stage s, int width, TailStrategy tail) {
    s.split(qa[0], so, si, width, tail).split(qa[1], mo, mi, channels, tail).reorder(mi, si, so, mo, qa[2]);
    s.vectorize(mi, lanes, tail == TailStrategy::ShiftInwards ? TailStrategy::Auto : tail);
    if (tail == TailStrategy::ShiftInwards) s.unroll(si).unroll(mi);
  };
  // The micro-tile's sums, channels innermost, over every input channel and tap.
  std::vector<Var> pa = p.args();  // [s, m, n]
  p.reorder_storage(pa[1], pa[0], pa[2]);
  auto micro = [&](Halide::Stage init, Halide::Stage update, bool tiled) {
    TailStrategy tail = tiled ? TailStrategy::RoundUp : TailStrategy::GuardWithIf;
    init.reorder(pa[1], pa[0]).vectorize(pa[1], lanes, tail);
    std::vector<VarOrRVar> order{pa[1], pa[0]};
    const auto rv = p.rvars(0);
    for (auto r = rv.rbegin(); r != rv.rend(); ++r) order.push_back(*r);  // input channels innermost
    order.push_back(pa[2]);
    update.reorder(order).vectorize(pa[1], lanes, tail);
    if (tiled) {
      init.unroll(pa[1]).unroll(pa[0]);
      update.unroll(pa[1]).unroll(pa[0]);
    }
  };
  const bool proven = schedule_branches(branches, rep, [&](size_t i, const auto &in) {
    const int t = has_wide && i == map + 1 ? wide : tile;
    tasks(in(y), i == map, t, TailStrategy::ShiftInwards);
    tiles(in(sums), t, TailStrategy::ShiftInwards);
    micro(in(p), in(p.update(0)), true);
  });
  if (!proven) {
    tasks(y, !has_rows, tile, TailStrategy::GuardWithIf);
    tiles(sums, tile, TailStrategy::GuardWithIf);
    micro(p, p.update(0), false);
  }
  sums.compute_at(y, at);
  p.compute_at(sums, so);
  // The padded input, copied whole before the tasks: a map's tasks (one per
  // micro-tile of channels) would each copy all of it. Images in parallel;
  // finer tasks (rows) cost more to start than a row takes to copy.
  std::vector<Var> xa = xp.args();
  xp.compute_root().vectorize(xa[0], lanes, TailStrategy::GuardWithIf).parallel(xa.back());
  rep->template_name = "conv";
}

}  // namespace

int channels_last_vectors(int64_t out_channels, int lanes) {
  return lanes >= 16 && out_channels < kChannelsLastVectors * lanes ? 1 : kChannelsLastVectors;
}

int channels_last_min_outputs(int lanes) { return (lanes >= 16 ? 1 : kChannelsLastVectors) * lanes; }

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
  // Twice the channels with AVX-512's 32 registers, unless the output has
  // fewer: a 6-channel tile still fills 12 registers there, and beats the
  // generic branch's guarded tails on the small Convs of 8-11 channels.
  const int channels = lanes >= 16 && !e.channels.below(2 * kConvChannels) ? 2 * kConvChannels : kConvChannels;
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
