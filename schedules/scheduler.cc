#include "schedules/scheduler.h"

#include <sstream>

namespace disco {

namespace {

// Output extents known at compile time are given to Halide only when they are
// a multiple of this (the widest vector, 64 bytes of int8), so no vector loop
// over them has a tail (see bound_outputs).
constexpr int64_t kBoundedExtentMultiple = 64;

// Halide's simplifier learns the facts of a branch condition of the form
// !(a || b || ...) one by one (each a is false inside the branch), while it
// loses them from a && b once it has folded that into min()s. So every
// predicate is built as "none of these fails".
Halide::Expr none_of(const std::vector<Halide::Expr> &failures) {
  Halide::Expr any;
  for (const auto &f : failures) any = any.defined() ? (any || f) : f;
  return !any;
}

}  // namespace

std::string ScheduleReport::describe() const {
  std::string s = template_name;
  if (branches.empty()) return s;
  s += ", branches:";
  for (const auto &b : branches) s += " " + b.name;
  return s;
}

ScheduleReport Scheduler::run(GroupKind kind) {
  bound_outputs();
  if (kind == GroupKind::Stitch)
    if (const int row_dims = stitch_row_dims()) return stitch(row_dims);
  if (kind == GroupKind::Loop && elementwise_outputs()) return loop();
  return generic(kind);
}

// Outputs are allocated at exactly their symbolic shapes: saying so lets
// Halide size per-row storage from the shape (768, not "whatever the buffer
// says") and drop checks.
void Scheduler::bound_outputs() {
  for (size_t i = 0; i < k_.outputs.size(); ++i) {
    Halide::Func f = k_.outputs[i];
    const Shape &s = output_shape(i);
    const int r = static_cast<int>(s.size());
    // Not for outputs with updates: a known min makes Halide take their loads of the output as
    // vector-aligned, which the caller's buffer need not be (an aligned masked load faults).
    if (f.outputs() != 1 || f.dimensions() != r || f.has_update_definition()) continue;
    for (int d = 0; d < r; ++d) {
      const KnownExtent e = known_extent(s[r - 1 - d]);
      // A constant extent with a tail (17, not a multiple of any vector or
      // task width) is left to the buffer: Halide 14 mis-partitions
      // GuardWithIf loops over such an output. Gathers of 17 keypoints in
      // vectors of 16 kept the loop (2 trips) but dropped its index, so row
      // 16 was never written (keypointrcnn's keypoints_scores); ArgMax over
      // 33 rows ran its last vector unguarded past the input. Unbounded,
      // the loop is partitioned at run time, as for a symbolic extent.
      if (e.value && *e.value % kBoundedExtentMultiple != 0)
        f.output_buffer().dim(d).set_min(0);
      else
        f.output_buffer().dim(d).set_bounds(0, e.expr);
    }
  }
}

// For a kernel with one output whose stages are row reductions over the
// output's trailing dims and RowValues of the output's rank: the number of
// those trailing (row) dims. 0 when the kernel is not such a stitch, or has
// one row only or no rows, where going row by row gains nothing.
int Scheduler::stitch_row_dims() const {
  if (k_.outputs.size() != 1) return 0;
  const Halide::Func &y = k_.outputs[0];
  if (y.outputs() != 1 || y.has_update_definition()) return 0;
  const int rank = y.dimensions();
  int kept = -1;
  for (const auto &s : k_.stages) {
    if (s.kind == StageKind::RowValues && s.rank == rank) continue;
    if (s.kind != StageKind::RowReduction || (kept >= 0 && s.rank != kept)) return 0;
    kept = s.rank;
  }
  if (kept < 1 || kept >= rank) return 0;
  return rank - kept;
}

// Outputs that are pure definitions of rank 1 or more, and no stages.
bool Scheduler::elementwise_outputs() const {
  for (auto &f : k_.outputs)
    if (f.outputs() != 1 || f.has_update_definition() || f.dimensions() == 0) return false;
  return k_.stages.empty();
}

Halide::Expr Scheduler::hint_condition() const {
  std::vector<Halide::Expr> unlikely;
  for (const auto &[name, param] : k_.syms.used()) {
    if (!store_.has_symbol(name) || store_.facts(name).likely.empty()) continue;
    unlikely.push_back(param != static_cast<int32_t>(store_.facts(name).likely[0]));
  }
  return unlikely.empty() ? Halide::Expr() : none_of(unlikely);
}

Halide::Expr Scheduler::dense_condition(const Shape &out, int width) const {
  std::vector<Halide::Expr> sparse;  // a broadcast dim that is 1, or a tail
  for (const auto &d : k_.maybe_broadcast) sparse.push_back(extent(d) == 1);
  if (!out.empty() && width > 1 && !store_.is_divisible(out.back(), width))
    sparse.push_back(extent(out.back()) % width != 0);
  return sparse.empty() ? Halide::Expr() : none_of(sparse);
}

KnownExtent Scheduler::known_extent(const Dim &d) const {
  KnownExtent e{extent(d), std::nullopt};
  if (Dim c = store_.canonical(d); c.is_const()) e.value = c.as_const();
  return e;
}

bool schedule_branches(
    const std::vector<TemplateBranch> &branches, ScheduleReport *rep,
    const std::function<void(size_t, const std::function<Halide::Stage(Halide::Stage)> &)> &schedule) {
  for (size_t i = 0; i < branches.size(); ++i) {
    const TemplateBranch &b = branches[i];
    if (b.never) continue;
    if (b.always) {
      schedule(i, [](Halide::Stage s) { return s; });
      return true;
    }
    schedule(i, [&](Halide::Stage s) { return s.specialize(b.condition); });
    rep->branches.push_back({b.name, b.condition});
  }
  return false;
}

std::optional<ProductKernel> find_product_kernel(const LoweredKernel &k, StageKind operand, int min_rank) {
  if (k.outputs.size() != 1) return std::nullopt;
  ProductKernel p{k.outputs[0], Halide::Func(), Stage{}};
  const Halide::Type f32 = Halide::Float(32);
  if (p.out.outputs() != 1 || p.out.has_update_definition() || p.out.dimensions() < min_rank ||
      p.out.output_types()[0] != f32)
    return std::nullopt;
  for (const auto &s : k.stages) {
    if (s.kind == StageKind::Reduction && !p.sum.defined())
      p.sum = s.f;
    else if (s.kind == operand && !p.operand.f.defined())
      p.operand = s;
    else
      return std::nullopt;
  }
  if (!p.sum.defined() || !p.operand.f.defined()) return std::nullopt;
  const int rank = p.out.dimensions();
  // A Conv reading channels-last weights sums over flattened positions [s, m, n].
  const int sum_rank = p.operand.channels_last_weights ? 3 : rank;
  if (p.sum.dimensions() != sum_rank || p.operand.f.dimensions() != rank || p.sum.output_types()[0] != f32 ||
      p.sum.num_update_definitions() != 1 || p.sum.rvars(0).empty() || !update_writes_pure_vars(p.sum, 0))
    return std::nullopt;
  return p;
}

bool update_writes_pure_vars(const Halide::Func &f, int u) {
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

SplitFold split_fold(Halide::Func f, int width) {
  SplitFold s{Halide::Func(), Halide::Var(f.name() + "_u"), Halide::RVar(f.name() + "_ri")};
  Halide::RVar outer(f.name() + "_ro");
  f.update(0).split(f.rvars(0)[0], outer, s.inner, width, Halide::TailStrategy::GuardWithIf);
  s.partials = f.update(0).rfactor(s.inner, s.lane);
  return s;
}

}  // namespace disco
