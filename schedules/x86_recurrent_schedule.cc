#include "schedules/x86_recurrent_schedule.h"

#include "schedules/x86_schedule.h"

namespace disco {

using Halide::Expr;
using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

bool schedule_x86_recurrent(LoweredKernel &k, const Halide::Target &target, ScheduleReport *rep) {
  const Stage *input = nullptr, *product = nullptr, *rec = nullptr;
  for (const auto &s : k.stages) {
    if (s.kind == StageKind::RecurrentInput && !input)
      input = &s;
    else if (s.kind == StageKind::Reduction && !product)
      product = &s;
    else if (s.kind == StageKind::Recurrence && !rec)
      rec = &s;
    else if (s.kind != StageKind::Other || s.f.has_update_definition())
      return false;
  }
  if (!input || !product || !rec) return false;
  Func xw = input->f, xsum = product->f, st = rec->f;
  if (xw.dimensions() != 3 || xw.has_update_definition() || xsum.dimensions() != 3 ||
      xsum.num_update_definitions() != 1 || xsum.rvars(0).size() != 1 || st.dimensions() != 5 ||
      st.num_update_definitions() != 1 || st.rvars(0).size() != 4 || xw.output_types()[0] != Halide::Float(32))
    return false;
  const int lanes = vector_lanes(Halide::Float(32), target);

  for (const auto &s : k.stages) {
    if (s.kind != StageKind::Other) continue;
    Func f = s.f;
    f.compute_root().vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf).parallel(f.args().back());
  }

  // The projection (gate rows gh, rows m of X, direction d): tasks of
  // kProjectionTasks micro-tiles of rows, per direction; in a task, panel by
  // panel of 2 vectors of gh (its W stays in L1), the micro-tiles' sums
  // computed in registers (a fixed kProjectionRows x 2-vector tile; rows past
  // the last read X clamped) over the input size.
  {
    std::vector<Var> a = xw.args();
    Var gh = a[0], m = a[1], d = a[2];
    const int cols = 2 * lanes;
    Var gho("gh_o"), ghi("gh_i"), mo("m_o"), mi("m_i"), mt("m_t"), mto("m_to"), task("projection_task");
    xw.compute_root()
        .split(gh, gho, ghi, cols, TailStrategy::GuardWithIf)
        .split(m, mo, mi, kProjectionRows, TailStrategy::GuardWithIf)
        .split(mo, mto, mt, kProjectionTasks, TailStrategy::GuardWithIf)
        .reorder(ghi, mi, mt, gho, mto, d)
        .vectorize(ghi, lanes);
    xw.fuse(mto, d, task).parallel(task);
    std::vector<Var> p = xsum.args();
    Var pv("gh_v"), pl("gh_l");
    xsum.compute_at(xw, mt).bound_extent(p[0], cols).bound_extent(p[1], kProjectionRows);
    xsum.split(p[0], pv, pl, lanes).vectorize(pl).unroll(pv).unroll(p[1]);
    xsum.update()
        .split(p[0], pv, pl, lanes)
        .reorder(pl, pv, p[1], xsum.rvars(0)[0])
        .vectorize(pl)
        .unroll(pv)
        .unroll(p[1]);
  }

  // The recurrence: (hidden unit j, phase q, batch b, direction d, step s).
  {
    std::vector<Var> a = st.args();
    Var b = a[2], d = a[3];
    std::vector<RVar> r = st.rvars(0);  // j, k, phase, step
    st.compute_root();
    // The initial values: little work, and the step loop is the outermost
    // (a parallel loop inside it is a hand-over between threads per step).
    st.vectorize(a[0], lanes, TailStrategy::GuardWithIf);
    // Wide vectors of j: one statement per up to kRecurrentVectors vectors
    // (the most that divide the hidden size), each vector's sum an
    // accumulator in a register over the chunk's terms of k (independent
    // FMA chains, enough to cover their latency) and each h(k) loaded once
    // for all of them (the sums share its buffer: LLVM reloads it after
    // every store). One vector, guarded, where none divides it.
    int width = lanes;
    const Shape &state = k.tensors.at(k.output_values.at(0)).shape;
    if (!state.empty() && state.back().is_const())
      for (int v = kRecurrentVectors; v > 1; --v)
        if (state.back().as_const() % (v * lanes) == 0) {
          width = v * lanes;
          break;
        }
    RVar jo("j_o"), ji("j_i");
    Halide::Stage u = st.update();
    // Each j of a phase writes its own sum or state and reads only its own
    // or the last phase's and step's: no race between the lanes of j.
    u.allow_race_conditions()
        .split(r[0], jo, ji, width, TailStrategy::GuardWithIf)
        .reorder(ji, jo, b, r[1], r[2], r[3], d)
        .vectorize(ji)
        .unroll(r[2])
        .parallel(d);
  }

  // The outputs: copies of state rows, serial (a parallel loop is a
  // hand-over between threads that costs more than the copy).
  for (auto &f : k.outputs) f.compute_root().vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf);
  rep->template_name = "recurrent";
  return true;
}

}  // namespace disco
