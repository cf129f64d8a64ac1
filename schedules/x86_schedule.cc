#include "schedules/x86_schedule.h"

#include <algorithm>
#include <optional>

#include "schedules/x86_conv_schedule.h"
#include "schedules/x86_dot_schedule.h"
#include "schedules/x86_recurrent_schedule.h"

namespace disco {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

// Vector accumulators per row fold: four hide the latency of the adds.
constexpr int kAccumulators = 4;
// The most rows per task of a stage the generic schedule puts at root.
constexpr int kStageTaskRows = 16;
// The most terms of a fold at root's row a lane's chain adds in one block
// where the row is summed in blocks (fold_in_blocks): a float sum of 2^24
// values near 0.1 was 6.8e-4 off, relative, in one chain of n / 16 terms per
// lane. At 2^24 terms and 16 lanes, blocks of 2^15 make chains of 2048 terms
// and a merge of 8192 partials.
constexpr int kFoldBlock = 1 << 15;
// Rows of a fold at root longer than this are summed in blocks (a
// specialization); shorter ones keep one chain per lane (at most 2^14 terms
// with 16 lanes: about 1e-5 off, relative, for same-signed terms), and so
// their numbers and loop nest (fold-blocks-2026-12-06.md).
constexpr int kLongFold = 1 << 18;
// The most vectors of a loop output's constant innermost dim whose loop is
// unrolled (vectorize_short_rows).
constexpr int kUnrolledVectors = 8;
// The most dims of a loop output whose rows run in nested loops (nested_row_tasks).
constexpr int kMostNestedDims = 4;

// How many units of `unit` elements each (rows, planes, tiles) make a
// parallel task of about kTaskElements elements: at least one.
Expr units_per_task(const Expr &unit) { return Halide::max(1, kTaskElements / Halide::max(unit, 1)); }

void schedule_pure(Func f, int lanes, bool parallel) {
  auto args = f.args();
  if (args.empty()) return;
  if (lanes > 1) f.vectorize(args[0], lanes, TailStrategy::GuardWithIf);
  if (parallel && args.size() >= 2) f.parallel(fuse_range(f, args, 1, args.size()));
}

// Rows (every dim but the innermost, fused) in tasks of about kTaskElements
// elements, `inner` long each, at most `most` rows; returns the task loop. A
// task per row costs more to start than a short row takes (a Resize to 160
// wide, one row per task: 6.6 ns per element on one thread).
Var row_tasks(Halide::Stage f, const std::vector<Var> &args, const Expr &inner, const Expr &most = Expr()) {
  Var outer = fuse_range(f, args, 1, args.size());
  Expr rows_per_task = units_per_task(inner);
  if (most.defined()) rows_per_task = Halide::min(rows_per_task, most);
  Var tile(outer.name() + "_t"), rows(outer.name() + "_r");
  f.split(outer, tile, rows, rows_per_task, TailStrategy::GuardWithIf);
  return tile;
}

Var row_tasks(Func f, const Expr &inner, const Expr &most = Expr()) { return row_tasks(f, f.args(), inner, most); }

// A pure Func's innermost dim in vectors, its rows in parallel row_tasks.
// With `exact` (`inner` is the Func's own innermost extent), rows at least
// a vector long get a branch whose last vector of a row overlaps the one
// before it (ShiftInwards) instead of the guarded tail, which Halide 14
// runs lane by lane (a predicated load of a strided read is a gather):
// convnet's 2x2 MaxPool of 28-column rows at 3x3x40x56 spent most of its
// time in the 12 columns of that tail.
void schedule_rows(Func f, int lanes, const Expr &inner, const Expr &most = Expr(), bool exact = false) {
  const std::vector<Var> args = f.args();
  if (lanes > 1 && exact) {
    Halide::Stage s = f.specialize(inner >= lanes);
    s.vectorize(args[0], lanes, TailStrategy::ShiftInwards);
    s.parallel(row_tasks(s, args, inner, most));
  }
  if (lanes > 1) f.vectorize(args[0], lanes, TailStrategy::GuardWithIf);
  f.parallel(row_tasks(f, inner, most));
}

// A Transpose's output (its axis `walk`, in Halide order, walks the input's
// innermost axis): tiles of one vector along the output's innermost axis by
// `line` values of `walk`, so each vector is a gather from `lanes` input
// lines that the next `line - 1` vectors read on from L1. Row order instead
// reads a line per element and comes back to it a row later, after thousands
// of others (Transpose (0,2,1) of [16,1024,1024]: 0.12 of a copy's bandwidth).
// Tasks of about kTaskElements elements, over the tiles' rows. `tail` for
// both tile axes; `unroll`: the tile's rows unrolled (the block branch below);
// `walk_inner`: consecutive tiles step along `walk` instead of along the
// output's innermost axis (see TransposeTiling). Returns the tile loop.
Var tile_transposed(Halide::Stage s, const std::vector<Var> &args, int lanes, int walk, int line, const Expr &inner,
                    TailStrategy tail, bool unroll, bool walk_inner) {
  Var x = args[0], y = args[walk];
  Var xo(x.name() + "_o"), xi(x.name() + "_i"), yo(y.name() + "_o"), yi(y.name() + "_i");
  s.split(x, xo, xi, lanes, tail).split(y, yo, yi, line, tail);
  std::vector<Var> outer(args.begin() + 1, args.begin() + walk);
  if (!walk_inner) outer.push_back(yo);
  outer.insert(outer.end(), args.begin() + walk + 1, args.end());
  if (walk_inner) outer.insert(outer.begin(), xo);
  std::vector<VarOrRVar> order{xi, yi, walk_inner ? yo : xo};
  order.insert(order.end(), outer.begin(), outer.end());
  s.reorder(order);
  s.vectorize(xi);
  if (unroll) s.unroll(yi);
  Var rows = fuse_range(s, outer, 0, outer.size());
  Expr per_task = units_per_task(inner * line);
  Var task(rows.name() + "_t"), row(rows.name() + "_r");
  s.split(rows, task, row, per_task, TailStrategy::GuardWithIf).parallel(task);
  return walk_inner ? yo : xo;
}

// The tile's square block of the source (`lanes` values of its innermost
// axis, Halide dim 0, by `lanes` of its dim `across`, which the output's
// innermost axis walks), staged at the tile's loop `at`: `rows` loads it as
// `lanes` dense vectors, `block` holds it transposed (reorder_storage), and
// the tile's rows are dense vectors of `block`. The stores into `block` are a
// 64-lane shuffle with constant indices into a stack array, which LLVM keeps
// in registers: an in-register transpose instead of a gather per vector
// ((0,2,1) of [16,1024,1024], one thread, standalone Halide: 3.9 -> 6.9 GB/s,
// a copy 10-12 GB/s). Scheduled only where `aligned` holds (undefined:
// always): there the tiles are whole, so both stages have constant extents;
// elsewhere they stay scalar loops over the part of the block a tile reads.
void stage_transposed_block(Func f, Func source, int across, int lanes, const LoopLevel &at, const Expr &aligned) {
  Func rows = source.in(f);
  Func block = rows.in(f);
  std::vector<Var> dims = rows.args();
  std::vector<Var> order{dims[0], dims[across]};
  for (size_t d = 1; d < dims.size(); ++d)
    if (static_cast<int>(d) != across) order.push_back(dims[d]);
  std::vector<Var> transposed = order;
  std::swap(transposed[0], transposed[1]);
  rows.compute_at(at);
  block.compute_at(at).reorder_storage(transposed);
  for (Func g : {rows, block}) {
    Halide::Stage s = aligned.defined() ? g.specialize(aligned) : Halide::Stage(g);
    s.reorder(std::vector<VarOrRVar>(order.begin(), order.end()));
    s.vectorize(dims[0], lanes).vectorize(dims[across], lanes);
  }
}

// Bytes between neighbours along `axis` (ONNX order) of a dense tensor of
// `shape`, when every extent after it is known at compile time.
std::optional<int64_t> static_stride(const ShapeStore &store, const Shape &shape, size_t axis, int bytes) {
  int64_t stride = bytes;
  for (size_t i = axis + 1; i < shape.size(); ++i) {
    const Dim d = store.canonical(shape[i]);
    if (!d.is_const()) return std::nullopt;
    stride *= d.as_const();
  }
  return stride;
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

// A fold over rows (one associative update over an RDom whose first
// dimension is the innermost axis) made vector-wide: the innermost RVar is
// split by kAccumulators vectors, the partial results live in an
// intermediate computed at `at`, then reduced across lanes.
void vectorize_fold(Func f, const LoopLevel &at, int lanes) {
  if (f.rvars(0).empty()) return;
  const int width = lanes * kAccumulators;
  SplitFold fold = split_fold(f, width);
  fold.partials.compute_at(at).vectorize(fold.lane, width);
  fold.partials.update(0).vectorize(fold.lane, width);
  f.update(0).atomic().vectorize(fold.inner, width);
}

// The fold of `update` (of the Func named `name`) over its RVar `r`, of
// `extent` terms, split as split_fold does into `width` lanes, and each
// lane's terms into blocks of at most kFoldBlock / width of them, as even
// as whole vectors allow (so the last block wastes at most one iteration
// per block; blocks of exactly kFoldBlock looped a whole guarded block for
// the last one's tail, 1.15x the plain fold on rows of 300,000). The
// partials are per (lane, block); the update folds them.
struct FoldBlocks {
  Func partials;  // partials(lane, block, kept...)
  Var lane, block;
  Halide::RVar lanes;  // the update's RVar over the lanes
};
FoldBlocks fold_in_blocks(Halide::Stage update, const std::string &name, const Halide::RVar &r, const Expr &extent,
                          int width) {
  FoldBlocks b{Func(), Var(name + "_u"), Var(name + "_block"), Halide::RVar(name + "_ri")};
  Halide::RVar ro(name + "_ro"), rb(name + "_rb"), rt(name + "_rt");
  update.split(r, ro, b.lanes, width, TailStrategy::GuardWithIf);
  Expr vectors = (Halide::max(extent, 1) + width - 1) / width;
  Expr blocks = (Halide::max(extent, 1) + kFoldBlock - 1) / kFoldBlock;
  update.split(ro, rb, rt, (vectors + blocks - 1) / blocks, TailStrategy::GuardWithIf);
  b.partials = update.rfactor({{b.lanes, b.lane}, {rb, b.block}});
  return b;
}

// A TopK's selection fold (StageKind::Selection): its consumers read a root
// copy, vectorized across the kept innermost dim in parallel tasks; each
// vector's fold, its empty slots included, runs in the copy's loop (in
// registers) with the axis outside its vector. At root, the fold's slots were
// filled in a pass of their own and read back, a third of a TopK k=2 of
// 262144 rows of 64.
void selection_in_copy(Func f, int lanes) {
  Func copy = f.in();
  copy.compute_root();
  Var x = copy.args()[0], xo(x.name() + "_o"), xi(x.name() + "_i");
  copy.split(x, xo, xi, lanes, TailStrategy::GuardWithIf).vectorize(xi);
  if (copy.args().size() >= 2) copy.parallel(fuse_range(copy, copy.args(), 1, copy.args().size()));
  f.compute_at(copy, xo);
  schedule_pure(f, lanes, false);
  schedule_updates(f, lanes, false);
}

Expr product(const std::vector<Expr> &es) {
  Expr p = 1;
  for (const auto &e : es) p = p * e;
  return p;
}

class X86Scheduler : public Scheduler {
 public:
  X86Scheduler(LoweredKernel &k, const ShapeStore &store, const Halide::Target &target)
      : Scheduler(k, store), target_(target) {}

 private:
  ScheduleReport stitch(int row_dims) override;
  ScheduleReport loop() override;
  ScheduleReport generic(GroupKind kind) override;
  void fold_at_root(const Stage &s, int lanes);
  bool may_fold_in_blocks(const Stage &s) const;
  bool transposed_output(size_t i, int lanes);
  bool window_rows_output();
  bool plane_pass_output();
  Halide::Var plane_tasks(Halide::Func f, const Shape &out);
  void vectorize_short_rows(Halide::Func f, const Dim &inner, int lanes);
  Halide::Var nested_row_tasks(Halide::Func f, const Shape &out);
  std::vector<ScheduleBranch> speculate(const Shape &out, int lanes, bool *serial);
  void specialize(Func root, const VarOrRVar &par, const std::vector<ScheduleBranch> &branches, bool serial);

  const Halide::Target &target_;
};

// The predicates of the branches worth having for a root of shape `out`.
// *serial: the shape is static and small, so no branch runs in parallel.
std::vector<ScheduleBranch> X86Scheduler::speculate(const Shape &out, int lanes, bool *serial) {
  std::vector<ScheduleBranch> branches;
  if (Expr hint = hint_condition(); hint.defined()) branches.push_back({"hint", hint});

  bool all_const = true;
  int64_t elements = 1;
  std::vector<Expr> extents;
  for (const auto &d : out) {
    Dim c = store_.canonical(d);
    if (c.is_const())
      elements *= c.as_const();
    else
      all_const = false;
    extents.push_back(extent(d));
  }
  *serial = all_const && elements <= kSerialElements;
  if (!all_const) branches.push_back({"small", product(extents) <= kSerialElements});

  if (Expr dense = dense_condition(out, lanes); dense.defined()) branches.push_back({"dense", dense});
  return branches;
}

// The branches copy the root's schedule so far; each but "small" runs `par`
// in parallel, and so does the generic one unless the kernel is `serial`.
void X86Scheduler::specialize(Func root, const VarOrRVar &par, const std::vector<ScheduleBranch> &branches,
                              bool serial) {
  for (const auto &b : branches) {
    Halide::Stage s = root.specialize(b.condition);
    if (b.name != "small" && !serial) s.parallel(par);
  }
  if (!serial) root.parallel(par);
}

// Row by row (see x86_schedule.h): one output, its stages row reductions
// over its rows and RowValues.
ScheduleReport X86Scheduler::stitch(int row_dims) {
  ScheduleReport rep;
  Func y = k_.outputs[0];
  const int rank = y.dimensions();
  const Shape &out = output_shape(0);
  const int lanes = vector_lanes(y.output_types()[0], target_);
  std::vector<Var> args = y.args();
  std::vector<Expr> row_extents;
  for (int i = 0; i < row_dims; ++i) row_extents.push_back(extent(out[rank - 1 - i]));
  Expr rows_per_task = units_per_task(product(row_extents));

  Var tile(args[row_dims].name() + "_t"), row(args[row_dims].name() + "_r");
  y.split(args[row_dims], tile, row, rows_per_task, TailStrategy::GuardWithIf);
  std::vector<Var> outer = {tile};
  outer.insert(outer.end(), args.begin() + row_dims + 1, args.end());
  Var par = fuse_range(y, outer, 0, outer.size());
  y.vectorize(args[0], lanes, TailStrategy::GuardWithIf);
  const LoopLevel at_row(y, row);
  for (const auto &s : k_.stages) {
    Func f = s.f;
    f.compute_at(at_row);
    const int l = vector_lanes(f.output_types()[0], target_);
    if (s.kind == StageKind::RowValues) {
      // Rows that divide into kAccumulators vectors get that many per
      // iteration: a Softmax's exp is a chain of about 15 dependent steps, and
      // one vector per iteration left its loop waiting on them (layernorm_softmax
      // at (16,512) took 0.75-0.93x the time on one thread, 0.77-0.93x on two,
      // over two rounds of alternating processes). Other rows
      // keep one vector, so that a short one is not one masked wide vector.
      const bool wide = store_.is_divisible(out.back(), l * kAccumulators);
      f.vectorize(f.args()[0], wide ? l * kAccumulators : l, TailStrategy::GuardWithIf);
    } else if (s.fold_extent.defined()) {
      vectorize_fold(f, at_row, l);
    } else {
      continue;
    }
    // Stored once per task, not once per row: stored at the row, a RowValues'
    // or a fold's size is one Halide cannot bound, so each row was a heap
    // allocation (convnext_tiny's LayerNorms over 96 channels: 31,000 a run,
    // 3% of its time on one thread, benchmarks/results/fold-storage-2026-12-05.md).
    f.store_at(y, par);
    // ... of one row, reused row after row: without the fold, a static
    // shape makes Halide keep the task's every row (64 KiB at 21 rows of
    // 768), out of L1.
    if (f.dimensions() > row_dims) f.fold_storage(f.args()[row_dims], 1);
  }
  bool serial = false;
  rep.branches = speculate(out, lanes, &serial);
  specialize(y, par, rep.branches, serial);
  rep.template_name = "stitch";
  return rep;
}

// Output i, when it is a Transpose's that walks its input's innermost axis
// along another axis than its own innermost, scheduled by tile_transposed.
// Where both tile axes are whole tiles of 4- or 8-byte values (a
// specialization when that is not known at compile time), each tile's
// source block goes through registers (stage_transposed_block).
//
// Tile order: one sweep of the inner tile loop touches the lines of `lanes`
// output rows and of X source rows (X the output's innermost extent, stepping
// along it), or of `lanes` source rows and Y output rows (Y the extent of
// `walk`, stepping along walk). The X (or Y) rows lie a source (output)
// stride apart; at a multiple of 4 KiB they all share an L1 set, and a sweep
// evicts what the next one would read on. So the sweep goes along the axis
// whose far side has the smaller stride: (0,2,3,1) of [16,64,128,128] steps
// along walk (output stride 256 B, source 64 KiB): 0.17-0.32 -> 0.50-0.71
// of a copy, one thread, loaded machine; (0,3,1,2) of [16,128,128,64] the
// other way (0.47-0.55 against 0.23-0.41).
bool X86Scheduler::transposed_output(size_t i, int lanes) {
  Func f = k_.outputs[i];
  const HTensor &t = k_.tensors.at(k_.output_values.at(i));
  const int rank = f.dimensions();
  if (t.transposed_inner < 0 || rank < 2 || f.has_update_definition() || f.outputs() != 1 ||
      static_cast<int>(t.shape.size()) != rank)
    return false;
  const int walk = rank - 1 - t.transposed_inner;  // in Halide order
  if (walk <= 0) return false;
  // Half a cache line of the input per tile: 8 output rows and 8 input lines
  // in flight, which fit one L1 set when both strides are multiples of 4 KiB
  // (a whole line, 16 rows, measured 0.33 of a copy against 0.51 on (0,3,1,2)).
  const int bytes = f.output_types()[0].bytes();
  const int line = std::max(1, 32 / bytes);
  const std::vector<Var> args = f.args();
  const Expr inner = extent(t.shape.back());
  const Dim &x_dim = t.shape.back(), &y_dim = t.shape[t.transposed_inner];
  // The block needs the output to call the source itself (not through an
  // alias wrapper) and a square tile of at most 64 values.
  const bool block = t.transposed_source.defined() && t.transposed_source.outputs() == 1 &&
                     static_cast<int>(t.transposed_perm.size()) == rank && t.f.name() == f.name() &&
                     line == lanes && (bytes == 4 || bytes == 8);
  if (!block) {
    tile_transposed(f, args, lanes, walk, line, inner, TailStrategy::GuardWithIf, false, false);
    return true;
  }
  Shape source(rank);
  for (int a = 0; a < rank; ++a) source[t.transposed_perm[a]] = t.shape[a];
  const int64_t across_axis = t.transposed_perm.back();  // the source axis the output's innermost walks
  const auto source_stride = static_stride(store_, source, across_axis, bytes);
  const auto output_stride = static_stride(store_, t.shape, t.transposed_inner, bytes);
  const bool walk_inner = source_stride && output_stride && *output_stride < *source_stride;

  const bool whole = store_.is_divisible(x_dim, lanes) && store_.is_divisible(y_dim, line);
  auto may_divide = [&](const Dim &d, int k) {
    const Dim c = store_.canonical(d);
    return !c.is_const() || c.as_const() % k == 0;
  };
  if (!whole && !(may_divide(x_dim, lanes) && may_divide(y_dim, line))) {
    tile_transposed(f, args, lanes, walk, line, inner, TailStrategy::GuardWithIf, false, walk_inner);
    return true;
  }
  Expr aligned;
  if (!whole) {
    aligned = extent(x_dim) % lanes == 0 && extent(y_dim) % line == 0;
    tile_transposed(f.specialize(aligned), args, lanes, walk, line, inner, TailStrategy::RoundUp, true, walk_inner);
  }
  Var at = tile_transposed(f, args, lanes, walk, line, inner, whole ? TailStrategy::RoundUp : TailStrategy::GuardWithIf,
                           whole, walk_inner);
  stage_transposed_block(f, t.transposed_source, rank - 1 - static_cast<int>(across_axis), lanes, LoopLevel(f, at),
                         aligned);
  return true;
}

// A 4-D output (column, row, channel, batch) vectorized along its columns, in
// parallel tasks of whole (n, c) planes: the loop over a task's planes, at
// which a per-plane stage is stored or computed.
Var X86Scheduler::plane_tasks(Func f, const Shape &out) {
  std::vector<Var> args = f.args();
  f.vectorize(args[0], vector_lanes(f.output_types()[0], target_), TailStrategy::GuardWithIf);
  Var plane = fuse_range(f, args, 2, 4);
  Expr per_task = units_per_task(extent(out[2]) * extent(out[3]));
  Var task(plane.name() + "_t"), one(plane.name() + "_r");
  f.split(plane, task, one, per_task, TailStrategy::GuardWithIf).parallel(task);
  return one;
}

// A kernel of one 2-D pool in two passes (its only stage the window rows,
// StageKind::WindowRows): tasks of whole (n, c) planes; in each, output rows
// in order, each computing only the window rows that the row above did not
// (the stage stored per plane, computed per output row: Halide's sliding
// window), so each input row's pass runs once. At root instead, the rows
// would be written out and read back (half the input's size for stride 2).
bool X86Scheduler::window_rows_output() {
  if (k_.outputs.size() != 1 || k_.stages.size() != 1 || k_.stages[0].kind != StageKind::WindowRows) return false;
  Func f = k_.outputs[0], rows = k_.stages[0].f;
  const Shape &out = output_shape(0);
  if (f.dimensions() != 4 || f.has_update_definition() || out.size() != 4 || rows.has_update_definition())
    return false;
  const Var one = plane_tasks(f, out);
  rows.store_at(f, one).compute_at(f, f.args()[1]);
  rows.vectorize(rows.args()[0], vector_lanes(rows.output_types()[0], target_), TailStrategy::GuardWithIf);
  return true;
}

// A 2-D Resize in two passes (its columns' pass a StageKind::PlanePass, the
// rest index and weight tables): tasks of whole (n, c) planes, each plane's
// pass computed in the task and read from cache by the output's rows. At
// root the pass was written out and read back whole (twice the input's size
// for a 2x upsample).
bool X86Scheduler::plane_pass_output() {
  if (k_.outputs.size() != 1) return false;
  Func f = k_.outputs[0], pass;
  const Stage *pass_stage = nullptr;
  for (const auto &s : k_.stages) {
    if (s.kind == StageKind::PlanePass && !pass.defined())
      pass = s.f, pass_stage = &s;
    else if (s.kind != StageKind::Other || s.f.has_update_definition() || s.f.dimensions() > 2)
      return false;  // only the tables besides the pass
  }
  const Shape &out = output_shape(0);
  if (!pass.defined() || f.dimensions() != 4 || f.has_update_definition() || out.size() != 4 ||
      pass.dimensions() != 4 || pass.has_update_definition())
    return false;
  for (auto &s : k_.stages) {
    if (s.kind != StageKind::Other) continue;
    s.f.compute_root();
    schedule_pure(s.f, s.f.output_types()[0].is_float() ? vector_lanes(s.f.output_types()[0], target_) : 1, true);
  }
  const Var one = plane_tasks(f, out);
  const int pass_lanes = vector_lanes(pass.output_types()[0], target_);
  pass.compute_at(f, one);
  if (pass_stage->phases > 1 && pass_stage->edge.defined()) {
    // Split by the phases, each unrolled: within one, the taps are dense loads of the edge-padded rows.
    Var x = pass.args()[0], xo(x.name() + "_o"), xi(x.name() + "_p");
    pass.split(x, xo, xi, pass_stage->phases, TailStrategy::GuardWithIf)
        .unroll(xi)
        .vectorize(xo, pass_lanes, TailStrategy::GuardWithIf);
    Func edge = pass_stage->edge;
    edge.compute_at(pass, pass.args()[1]).vectorize(edge.args()[0], pass_lanes, TailStrategy::GuardWithIf);
  } else {
    pass.vectorize(pass.args()[0], pass_lanes, TailStrategy::GuardWithIf);
  }
  return true;
}

// A loop output's innermost dim in vectors. Where the kernel concatenates
// along that dim and it is a constant few whole vectors, their loop is
// unrolled: each vector's position is then a constant, so the Concat's
// select between clamped reads simplifies to one dense load per vector.
// Left as a loop, each lane clamped its own index and the reads were
// gathers: LLaMA's rotary embedding (the two halves of a 64-wide head
// swapped) ran 1.8 ns an element, 2.4% of llama_block at one thread. Not
// without a Concat: unrolled, the clamps of a Reshape's reads stay (Halide
// removes them by splitting the vector loop), and a head split's copy ran
// at half its speed.
void X86Scheduler::vectorize_short_rows(Func f, const Dim &inner, int lanes) {
  const Var x = f.args()[0];
  const Dim c = store_.canonical(inner);
  const bool pieces =
      std::any_of(k_.tensors.begin(), k_.tensors.end(), [](const auto &t) { return t.second.pieces_along_inner; });
  if (pieces && lanes > 1 && c.is_const() && c.as_const() % lanes == 0 && c.as_const() <= kUnrolledVectors * lanes) {
    // The bound makes the vectors' count a constant that Halide can unroll
    // (the output's extent there is c).
    Var xo(x.name() + "_vo"), xi(x.name() + "_vi");
    f.bound(x, 0, static_cast<int>(c.as_const()));
    f.split(x, xo, xi, lanes, TailStrategy::RoundUp).vectorize(xi).unroll(xo);
    return;
  }
  f.vectorize(x, lanes, TailStrategy::GuardWithIf);
}

// The rows of a loop output of 3 or 4 dims (every dim but the innermost)
// in tasks of about kTaskElements elements, as nested loops: from the
// second-innermost dim outwards, each dim is split by as many of its indices
// as the task still has room for, and the outer parts, fused, are the tasks
// (returned). A task then walks its rows without division. Fused into one
// index and split, every row rebuilt its indices from it with a division
// and a remainder by each symbolic extent (LLaMA's rotary kernels, rows of
// 64 floats over [batch, 12, seq]: four 32-bit divisions a row, a third of
// their time). Not past 4 dims: Halide bounds the fused task index's parts
// by interval arithmetic that allows negative symbolic extents, and at 7
// dims (ONNX's SoftmaxCrossEntropyLoss tests over [N, C, d1..d5]) the
// output's required region came out below 0, which its buffer failed.
Var X86Scheduler::nested_row_tasks(Func f, const Shape &out) {
  const std::vector<Var> args = f.args();
  const int rank = static_cast<int>(args.size());
  if (rank < 3 || rank > kMostNestedDims) return row_tasks(f, extent(out.back()));
  Expr room = units_per_task(extent(out.back()));
  std::vector<VarOrRVar> order = {args[0]};
  std::vector<Var> tasks;
  for (int a = 1; a < rank; ++a) {
    const Expr factor = Halide::min(Halide::max(extent(out[rank - 1 - a]), 1), room);
    Var t(args[a].name() + "_t"), r(args[a].name() + "_r");
    f.split(args[a], t, r, factor, TailStrategy::GuardWithIf);
    order.push_back(r);
    tasks.push_back(t);
    room = Halide::max(1, room / factor);
  }
  order.insert(order.end(), tasks.begin(), tasks.end());
  f.reorder(order);
  return fuse_range(f, tasks, 0, tasks.size());
}

// Elementwise outputs: vectors along the innermost dim, tasks of rows.
ScheduleReport X86Scheduler::loop() {
  ScheduleReport rep;
  for (size_t i = 0; i < k_.outputs.size(); ++i) {
    Func f = k_.outputs[i];
    const Shape &out = output_shape(i);
    const int lanes = vector_lanes(f.output_types()[0], target_);
    if (transposed_output(i, lanes)) continue;
    std::vector<Var> args = f.args();
    Var par;
    if (args.size() == 1) {
      Var xo(args[0].name() + "_t"), xi(args[0].name() + "_i");
      f.split(args[0], xo, xi, kTaskElements, TailStrategy::GuardWithIf);
      f.vectorize(xi, lanes, TailStrategy::GuardWithIf);
      par = xo;
    } else {
      par = nested_row_tasks(f, out);
      vectorize_short_rows(f, out.back(), lanes);
    }
    bool serial = false;
    auto branches = speculate(out, lanes, &serial);
    specialize(f, par, branches, serial);
    if (i == 0) rep.branches = branches;
  }
  rep.template_name = "loop";
  return rep;
}

// Whether a fold's rows may be long enough to sum in blocks (kLongFold): a
// float fold over an innermost axis not known to be shorter.
bool X86Scheduler::may_fold_in_blocks(const Stage &s) const {
  return s.fold_inner && s.f.output_types()[0].is_float() && !known_extent(*s.fold_inner).below(kLongFold + 1);
}

// A row fold materialized at root: rows in parallel tasks, each row's fold
// vector-wide. Rows longer than kLongFold take a specialization that sums
// them in blocks (fold_in_blocks).
void X86Scheduler::fold_at_root(const Stage &s, int lanes) {
  Func f = s.f;
  f.compute_root();
  std::vector<Var> kept = f.args();
  std::optional<Halide::Stage> long_rows;  // f's update for rows past kLongFold
  Expr row_length;                         // its innermost folded extent, where it may be
  if (!f.rvars(0).empty() && may_fold_in_blocks(s)) {
    row_length = extent(*s.fold_inner);
    long_rows = f.update(0).specialize(row_length > kLongFold);
  }
  if (kept.empty()) {
    if (long_rows) {
      const int width = lanes * kAccumulators;
      FoldBlocks b = fold_in_blocks(*long_rows, f.name(), f.rvars(0)[0], row_length, width);
      b.partials.compute_root().vectorize(b.lane, width);
      b.partials.update(0).vectorize(b.lane, width);
    }
    vectorize_fold(f, LoopLevel::root(), lanes);
    return;
  }
  Expr rows_per_task = units_per_task(s.fold_extent);
  Var tile(f.name() + "_t"), one(f.name() + "_r");
  // rfactor first: it replaces the update, and the loops below belong to the
  // new one. Each row one vector of partial sums, folded into the row's value
  // by a plain loop over its lanes. Not vectorize_fold: at `one`, an index
  // fused from the kept dims, Halide could not vectorize its merge (the
  // row's load and store addresses, rebuilt from the fused index, differ as
  // expressions), so its atomic merge ran a compare-and-swap per lane; and
  // it sizes a row's partials for a whole kept dim (a `%` of the index has
  // no tighter bound), a heap allocation per row. Those took 5 ns per term
  // of a ReduceMean over 96 channels of [2,40,40,96]. Stored per task (that
  // size, on the heap: it can be large), a row's lanes one dense vector.
  // In blocks (fold_in_blocks), the partials are per lane and block,
  // stored alike.
  auto at_row = [&](Func g, const Var &first) {
    std::vector<Var> storage = {first};
    for (const Var &v : g.args())
      if (v.name() != first.name()) storage.push_back(v);
    g.store_at(LoopLevel(f, tile)).compute_at(LoopLevel(f, one)).reorder_storage(storage);
  };
  auto place = [&](SplitFold fold) {
    at_row(fold.partials, fold.lane);
    fold.partials.vectorize(fold.lane, lanes);
    fold.partials.update(0).vectorize(fold.lane, lanes);
  };
  auto rows_in_tasks = [&](Halide::Stage merge) {
    Var fused = fuse_range(merge, kept, 0, kept.size());
    merge.split(fused, tile, one, rows_per_task, TailStrategy::GuardWithIf).parallel(tile);
  };
  if (long_rows) {
    FoldBlocks b = fold_in_blocks(*long_rows, f.name(), f.rvars(0)[0], row_length, lanes);
    place({b.partials, b.lane, b.lanes});
    rows_in_tasks(*long_rows);
  }
  if (!f.rvars(0).empty()) place(split_fold(f, lanes));
  rows_in_tasks(f.update(0));
}

// Dot kernels of MatMul/Gemm form get the dot template (x86_dot_schedule.h),
// float Convs the conv template (x86_conv_schedule.h), RNN/GRU/LSTM kernels
// the recurrent template (x86_recurrent_schedule.h).
// Others, and input and opaque kernels: stages at root, vectorized and
// parallel; a DotOperand stage is inlined (read where the product reads it).
ScheduleReport X86Scheduler::generic(GroupKind kind) {
  if (kind == GroupKind::Opaque) {
    ScheduleReport rep;
    if (schedule_x86_recurrent(k_, target_, &rep)) return rep;
  }
  if (kind == GroupKind::Dot && !k_.outputs.empty()) {
    const Shape &out = output_shape(0);
    ScheduleReport rep;
    if (out.size() >= 2 &&
        schedule_x86_dot(k_, {known_extent(out.back()), known_extent(out[out.size() - 2])}, target_, &rep))
      return rep;
    if (out.size() >= 3) {
      Dim positions = out[2];
      for (size_t i = 3; i < out.size(); ++i) positions = positions * out[i];
      if (schedule_x86_conv(k_, {known_extent(out.back()), known_extent(out[1]), known_extent(positions)}, target_,
                            &rep))
        return rep;
    }
  }
  if (window_rows_output()) return {"window rows", {}};
  if (plane_pass_output()) return {"plane passes", {}};
  for (auto &s : k_.stages) {
    if (s.kind == StageKind::RowValues || s.kind == StageKind::DotOperand || s.kind == StageKind::ConvInput)
      continue;  // inlined: read where used
    const int lanes = vector_lanes(s.f.output_types()[0], target_);
    if (s.fold_extent.defined() && s.kind == StageKind::RowReduction && update_writes_pure_vars(s.f, 0)) {
      fold_at_root(s, lanes);
      continue;
    }
    if (s.kind == StageKind::Selection) {
      selection_in_copy(s.f, lanes);
      continue;
    }
    s.f.compute_root();
    // Integer stages stay scalar: vectorized, Halide 14 rewrites the zero-point
    // subtractions of MatMulInteger/QLinear* into wrong widening arithmetic.
    // Folds of order keys have none (Stage::vector_integers).
    const int stage_lanes = s.f.output_types()[0].is_float() || s.vector_integers ? lanes : 1;
    if (s.f.args().size() >= 2 && !s.f.has_update_definition() && !k_.outputs.empty() &&
        !output_shape(0).empty()) {
      // A stage's rows are taken to be about as long as the output's (a
      // Resize's first pass, say); at most kStageTaskRows rows per task, in
      // case they are much longer.
      schedule_rows(s.f, stage_lanes, extent(output_shape(0).back()), kStageTaskRows);
      continue;
    }
    schedule_pure(s.f, stage_lanes, true);
    schedule_updates(s.f, stage_lanes, true);
  }
  for (size_t i = 0; i < k_.outputs.size(); ++i) {
    Func f = k_.outputs[i];
    int lanes = vector_lanes(f.output_types()[0], target_);
    const Shape &out = output_shape(i);
    if (transposed_output(i, lanes)) continue;
    if (f.args().size() >= 2 && !f.has_update_definition() && !out.empty()) {
      // Rows known to be shorter than a vector (TopK's k): vectors no wider than
      // them. A predicated 8-lane vector with 2 lanes in use, its reads masked
      // lane by lane, took most of a TopK k=2 of 262144 rows.
      while (lanes > 1 && known_extent(out.back()).below(lanes)) lanes /= 2;
      schedule_rows(f, lanes, extent(out.back()), Expr(), true);
      continue;
    }
    schedule_pure(f, lanes, true);
    schedule_updates(f, lanes, true);
  }
  return {"generic", {}};
}

}  // namespace

int vector_lanes(const Halide::Type &t, const Halide::Target &target) {
  return std::clamp(target.natural_vector_size(t), 1, 64);
}

ScheduleReport schedule_x86(LoweredKernel &k, GroupKind kind, const ShapeStore &store, const Halide::Target &target) {
  return X86Scheduler(k, store, target).run(kind);
}

}  // namespace disco
