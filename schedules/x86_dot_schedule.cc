#include "schedules/x86_dot_schedule.h"

#include "schedules/x86_schedule.h"

namespace disco {

using Halide::Expr;
using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

int dot_panel_width(int64_t n, const Halide::Target &target) {
  const int lanes = vector_lanes(Halide::Float(32), target);
  for (int vectors : {kPanelVectors, 2})
    if (n >= vectors * lanes && n % (vectors * lanes) == 0) return vectors * lanes;
  return 0;
}

Expr dot_task_rows(const Expr &m, int rows) {
  // As few tasks as tiles of kTaskRows need, their rows spread evenly and
  // rounded up to MR. The last task stops at M (its sums run on in whole
  // micro-tiles, reading row M - 1, lowering/ops/dot_ops.cc), so no rows are
  // computed twice. Tiles of the largest multiple of MR below M, shifted in
  // at M's edge, computed up to a whole task twice: M = 20 (bert_layer at
  // 3x20) ran two 16-row tasks, M = 60 two of 56.
  const Expr tasks = (m + kTaskRows - 1) / kTaskRows;
  const Expr even = ((m + tasks - 1) / tasks + rows - 1) / rows * rows;
  return Halide::clamp(even, rows, kTaskRows);
}

bool schedule_x86_dot(LoweredKernel &k, const DotExtents &e, const Halide::Target &target, ScheduleReport *rep) {
  std::optional<ProductKernel> found = find_product_kernel(k, StageKind::DotOperand, 2);
  if (!found || found->sum.rvars(0).size() != 1) return false;
  Func y = found->out, p = found->sum, q = found->operand.f;
  const int panel = found->operand.panel;
  const int lanes = vector_lanes(Halide::Float(32), target);
  // A packed operand sets the micro-tile's width. MR rows of sums in
  // registers, see the header; two-vector tiles keep MR (6 rows would fit
  // in the registers, but tasks of a multiple of 6 rows overlap at M's edge
  // far more than tasks of a multiple of 4: measured slower).
  const int vectors = panel > 0 ? panel / lanes : kPanelVectors;
  if (panel > 0 && (panel % lanes != 0 || (vectors != kPanelVectors && vectors != 2))) return false;
  const int rows = lanes >= 16 ? 8 : 4;
  const int cols = vectors * lanes, wide = kWideVectors * lanes;

  // The branches, tried in order, then the generic one (guarded tails):
  //  tiles  N >= one tile and M >= MR: tasks of a multiple of MR rows (at
  //         most kTaskRows, dot_task_rows), full tiles overlapping at N's
  //         edge, the last task stopping at M;
  //  rows   N >= one wide tile and M < MR (a few rows, as in decoding): each
  //         task all M rows of kWideVectors vectors of N, a micro-kernel of
  //         one row by kWideVectors vectors (memory-bound: wide tiles read
  //         whole cache lines of the operand).
  struct TileShape {
    int vectors, micro_rows;
    Expr task_rows;
  };
  const Expr task_rows = dot_task_rows(e.m.expr, rows);
  const std::vector<TileShape> shapes{{vectors, rows, task_rows}, {kWideVectors, 1, Halide::max(e.m.expr, 1)}};
  const std::vector<TemplateBranch> branches{
      {"tiles", e.n.expr >= cols && e.m.expr >= rows, e.n.at_least(cols) && e.m.at_least(rows),
       e.n.below(cols) || e.m.below(rows)},
      {"rows", e.n.expr >= wide && e.m.expr < rows, e.n.at_least(wide) && e.m.below(rows),
       e.n.below(wide) || e.m.at_least(rows)}};

  std::vector<Var> a = y.args();
  Var n = a[0], m = a[1];
  Var no(n.name() + "_to"), ni(n.name() + "_ti"), mo(m.name() + "_to"), mi(m.name() + "_ti"), task("dot_task");
  // N's tail as `n_tail` says (the branches: ShiftInwards, tiles overlapping
  // at N's edge in whole vectors); tasks of rows always stop at M
  // (GuardWithIf: a row loop's bound).
  auto tasks = [&](Halide::Stage s, int width, const Expr &task_rows, TailStrategy n_tail) {
    s.split(n, no, ni, width, n_tail).split(m, mo, mi, task_rows, TailStrategy::GuardWithIf).reorder(ni, mi, no, mo);
    std::vector<Var> outer{no, mo};
    outer.insert(outer.end(), a.begin() + 2, a.end());
    s.rename(fuse_range(s, outer, 0, outer.size()), task).parallel(task);
    s.vectorize(ni, lanes, n_tail == TailStrategy::ShiftInwards ? TailStrategy::Auto : n_tail);
  };

  // The task's sums, one K block at a time over every micro-tile of rows.
  std::vector<Var> pa = p.args();
  RVar kk = p.rvars(0)[0];
  RVar ko(kk.name() + "_ko"), ki(kk.name() + "_ki");
  Var pmo(pa[1].name() + "_mo"), pmi(pa[1].name() + "_mi");
  auto micro = [&](Halide::Stage init, Halide::Stage update, int micro_rows, bool tiled) {
    TailStrategy tail = tiled ? TailStrategy::RoundUp : TailStrategy::GuardWithIf;
    init.vectorize(pa[0], lanes, tail);
    update.split(kk, ko, ki, kKBlock, TailStrategy::GuardWithIf).split(pa[1], pmo, pmi, micro_rows, tail);
    update.reorder(pa[0], pmi, ki, pmo, ko).vectorize(pa[0], lanes, tail);
    if (tiled) update.unroll(pa[0]).unroll(pmi);
  };
  const bool proven = schedule_branches(branches, rep, [&](size_t i, const auto &in) {
    tasks(in(y), shapes[i].vectors * lanes, shapes[i].task_rows, TailStrategy::ShiftInwards);
    micro(in(p), in(p.update(0)), shapes[i].micro_rows, true);
  });
  if (!proven) {
    tasks(y, cols, task_rows, TailStrategy::GuardWithIf);
    micro(p, p.update(0), rows, false);
  }
  p.compute_at(y, task);

  // The panel of the right operand the task reads: K x one tile of N, unless
  // packed at compile time (read in place).
  if (panel > 0)
    q.compute_inline();
  else
    q.compute_at(y, task).vectorize(q.args()[0], lanes, TailStrategy::GuardWithIf);

  rep->template_name = "dot";
  return true;
}

}  // namespace disco
