#include "schedules/x86_recurrent_schedule.h"

#include "schedules/x86_schedule.h"

namespace disco {

using Halide::Expr;
using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

bool schedule_x86_recurrent(LoweredKernel &k, const Halide::Target &target, ScheduleReport *rep) {
  const Stage *input = nullptr, *rec = nullptr;
  for (const auto &s : k.stages) {
    if (s.kind == StageKind::RecurrentInput && !input)
      input = &s;
    else if (s.kind == StageKind::Recurrence && !rec)
      rec = &s;
    else if (s.kind != StageKind::Other || s.f.has_update_definition())
      return false;
  }
  if (!input || !rec) return false;
  Func xw = input->f, st = rec->f;
  if (xw.dimensions() != 3 || xw.num_update_definitions() != 1 || st.dimensions() != 5 ||
      st.num_update_definitions() != 1 || st.rvars(0).size() != 4 || xw.output_types()[0] != Halide::Float(32))
    return false;
  const int lanes = vector_lanes(Halide::Float(32), target);

  for (const auto &s : k.stages) {
    if (s.kind != StageKind::Other) continue;
    Func f = s.f;
    f.compute_root().vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf).parallel(f.args().back());
  }

  // The projection: (gate rows gh, rows m of X, direction d) += X[m, i] W[d, i, gh].
  {
    std::vector<Var> a = xw.args();
    Var gh = a[0], m = a[1], d = a[2];
    RVar i = xw.rvars(0)[0];
    xw.compute_root();
    xw.vectorize(gh, lanes, TailStrategy::GuardWithIf).parallel(d);
    const int cols = 2 * lanes;
    Var gho("gh_o"), ght("gh_t"), ghv("gh_v"), ghi("gh_i"), mo("m_o"), mi("m_i"), mt("m_t"), mto("m_to"),
        task("projection_task");
    Halide::Stage u = xw.update();
    u.split(gh, gho, ght, cols, TailStrategy::GuardWithIf)
        .split(ght, ghv, ghi, lanes, TailStrategy::GuardWithIf)
        .split(m, mo, mi, kProjectionRows, TailStrategy::GuardWithIf)
        .split(mo, mto, mt, kProjectionTasks, TailStrategy::GuardWithIf)
        .reorder(ghi, ghv, mi, i, mt, gho, mto, d)
        .vectorize(ghi)
        .unroll(ghv)
        .unroll(mi);
    u.fuse(mto, d, task).parallel(task);
  }

  // The recurrence: (hidden unit j, phase q, batch b, direction d, step s).
  {
    std::vector<Var> a = st.args();
    Var b = a[2], d = a[3];
    std::vector<RVar> r = st.rvars(0);  // j, k, phase, step
    st.compute_root();
    st.vectorize(a[0], lanes, TailStrategy::GuardWithIf).parallel(d);
    RVar jo("j_o"), ji("j_i");
    Halide::Stage u = st.update();
    // Each j of a phase writes its own sum or state and reads only its own
    // or the last phase's and step's: no race between the lanes of j.
    u.allow_race_conditions()
        .split(r[0], jo, ji, lanes, TailStrategy::GuardWithIf)
        .reorder(ji, jo, b, r[1], r[2], r[3], d)
        .vectorize(ji)
        .unroll(r[2])
        .parallel(d);
  }

  for (auto &f : k.outputs) {
    f.compute_root().vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf);
    if (f.dimensions() >= 2) f.parallel(f.args().back());
  }
  rep->template_name = "recurrent";
  return true;
}

}  // namespace disco
