#include "schedules/x86_dot_schedule.h"

#include <algorithm>
#include <string>

namespace disco {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

struct DotFuncs {
  Func out, product, operand;
};

std::optional<DotFuncs> find_dot(const LoweredKernel &k) {
  if (k.outputs.size() != 1) return std::nullopt;
  DotFuncs d{k.outputs[0], Func(), Func()};
  if (d.out.outputs() != 1 || d.out.has_update_definition() || d.out.dimensions() < 2 ||
      d.out.output_types()[0] != Halide::Float(32))
    return std::nullopt;
  for (const auto &s : k.stages) {
    if (s.kind == StageKind::Reduction && !d.product.defined())
      d.product = s.f;
    else if (s.kind == StageKind::DotOperand && !d.operand.defined())
      d.operand = s.f;
    else
      return std::nullopt;
  }
  if (!d.product.defined() || !d.operand.defined()) return std::nullopt;
  const int rank = d.out.dimensions();
  if (d.product.dimensions() != rank || d.operand.dimensions() != rank ||
      d.product.output_types()[0] != Halide::Float(32) || d.product.num_update_definitions() != 1 ||
      d.product.rvars(0).size() != 1 || !update_writes_pure_vars(d.product, 0))
    return std::nullopt;
  return d;
}

}  // namespace

bool schedule_x86_dot(LoweredKernel &k, const DotExtents &e, const Halide::Target &target, ScheduleReport *rep) {
  std::optional<DotFuncs> found = find_dot(k);
  if (!found) return false;
  Func y = found->out, p = found->product, q = found->operand;
  const int lanes = std::clamp(target.natural_vector_size(Halide::Float(32)), 1, 64);
  const int rows = lanes >= 16 ? 8 : 4;  // MR: sums in registers, see the header
  const int cols = kPanelVectors * lanes;

  // The branches, tried in order, then the generic one (guarded tails):
  //  tiles  N >= one tile and M >= MR: tasks of a multiple of MR rows (at
  //         most kTaskRows), full tiles overlapping at the edges;
  //  rows   N >= one wide tile and M < MR (a few rows, as in decoding): each
  //         task all M rows of kWideVectors vectors of N, a micro-kernel of
  //         one row by kWideVectors vectors (memory-bound: wide tiles read
  //         whole cache lines of the operand).
  struct Branch {
    std::string name;
    Expr condition;
    int vectors, micro_rows;
    Expr task_rows;
  };
  std::vector<Branch> branches;
  const int wide = kWideVectors * lanes;
  Branch tiles{"tiles", e.n >= cols && e.m >= rows, kPanelVectors, rows,
               Halide::clamp(e.m / rows * rows, rows, kTaskRows)};
  Branch few{"rows", e.n >= wide && e.m < rows, kWideVectors, 1, Halide::max(e.m, 1)};
  const bool n_small = e.n_const && *e.n_const < cols, m_small = e.m_const && *e.m_const < rows;
  const bool n_tiles = e.n_const && *e.n_const >= cols, m_tiles = e.m_const && *e.m_const >= rows;
  bool always = false;  // a branch always taken: no generic schedule
  if (!n_small && !m_small) {
    always = n_tiles && m_tiles;
    branches.push_back(tiles);
  }
  if (!always && !(e.m_const && !m_small) && !(e.n_const && *e.n_const < wide)) {
    always = m_small && e.n_const && *e.n_const >= wide;
    branches.push_back(few);
  }

  std::vector<Var> a = y.args();
  Var n = a[0], m = a[1];
  Var no(n.name() + "_to"), ni(n.name() + "_ti"), mo(m.name() + "_to"), mi(m.name() + "_ti"), task("dot_task");
  auto tasks = [&](Halide::Stage s, int width, const Expr &task_rows, TailStrategy tail) {
    s.tile(n, m, no, mo, ni, mi, width, task_rows, tail);
    std::vector<Var> outer{no, mo};
    outer.insert(outer.end(), a.begin() + 2, a.end());
    Var t = outer.back();
    for (size_t i = outer.size() - 1; i-- > 0;) {
      Var fused(outer[i].name() + "_" + t.name());
      s.fuse(outer[i], t, fused);
      t = fused;
    }
    s.rename(t, task).parallel(task);
    s.vectorize(ni, lanes, tail == TailStrategy::ShiftInwards ? TailStrategy::Auto : tail);
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
  for (const auto &b : branches) {
    const bool last = always && &b == &branches.back();
    Halide::Stage ys = last ? Halide::Stage(y) : y.specialize(b.condition);
    tasks(ys, b.vectors * lanes, b.task_rows, TailStrategy::ShiftInwards);
    Halide::Stage init = last ? Halide::Stage(p) : p.specialize(b.condition);
    Halide::Stage update = last ? p.update(0) : p.update(0).specialize(b.condition);
    micro(init, update, b.micro_rows, true);
    if (!last) rep->branches.push_back({b.name, b.condition});
  }
  if (!always) {
    tasks(y, cols, tiles.task_rows, TailStrategy::GuardWithIf);
    micro(p, p.update(0), rows, false);
  }
  p.compute_at(y, task);

  // The panel of the right operand the task reads: K x one tile of N.
  q.compute_at(y, task).vectorize(q.args()[0], lanes, TailStrategy::GuardWithIf);

  rep->template_name = "dot";
  return true;
}

}  // namespace disco
