#include "schedules/x86_recurrent_schedule.h"

#include "lowering/recurrent_weight_layout.h"
#include "schedules/x86_schedule.h"

namespace disco {

using Halide::Expr;
using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

int recurrent_projection_vectors(const Halide::Target &target) {
  return vector_lanes(Halide::Float(32), target) >= 16 ? 4 : 2;  // 32 registers with 16 float lanes
}

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
  // Without a projection stage the node reads X's projections, computed
  // before it (lowering/recurrent_projection.h).
  if (!rec || !input != !product || (input && input->directions < 1)) return false;
  Func st = rec->f;
  if (st.dimensions() != 7 || st.num_update_definitions() != 2 || st.rvars(1).size() != 5 ||
      st.output_types()[0] != Halide::Float(32))
    return false;
  if (input) {
    Func xw = input->f, xsum = product->f;
    if (xw.dimensions() != 3 || xw.has_update_definition() || xsum.dimensions() != 3 ||
        xsum.num_update_definitions() != 1 || xsum.rvars(0).size() != 1 || xw.output_types()[0] != Halide::Float(32))
      return false;
  }
  const int lanes = vector_lanes(Halide::Float(32), target);

  for (const auto &s : k.stages) {
    if (s.kind != StageKind::Other) continue;
    Func f = s.f;
    f.compute_root().vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf).parallel(f.args().back());
  }

  // The projection (gate rows gh, rows m of X, direction d): tasks of
  // kProjectionTasks micro-tiles of rows, per direction; in a task, panel by
  // panel of recurrent_projection_vectors() vectors of gh (W's constant
  // panels, read from the L2 by each micro-tile), the micro-tiles' sums
  // computed in registers (a fixed kProjectionRows x 2- or 4-vector tile;
  // rows past the last read X clamped) over the input size.
  if (input) {
    Func xw = input->f, xsum = product->f;
    std::vector<Var> a = xw.args();
    Var gh = a[0], m = a[1], d = a[2];
    const int cols = recurrent_projection_vectors(target) * lanes;
    Var gho("gh_o"), ghi("gh_i"), mo("m_o"), mi("m_i"), mt("m_t"), mto("m_to"), task("projection_task");
    xw.compute_root()
        .split(gh, gho, ghi, cols, TailStrategy::GuardWithIf)
        .split(m, mo, mi, kProjectionRows, TailStrategy::GuardWithIf)
        .split(mo, mto, mt, kProjectionTasks, TailStrategy::GuardWithIf)
        .reorder(ghi, mi, mt, gho, d, mto)
        .vectorize(ghi, lanes);
    // The direction bounded to its constant extent and fused inside the row
    // tasks (d = task % D). Fused outside them, d = task / (tasks per
    // direction) was an interval bounds inference could not bound: it sized
    // the buffer's direction axis by the task count (3.5 GB at 12,800 rows
    // of X) and read W at direction -2.
    xw.bound(d, 0, input->directions).fuse(d, mto, task).parallel(task);
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

  // The recurrence: (hidden unit j % Lj, batch row b % Lb, j / Lj, phase q,
  // b / Lb, direction d, step s), a tile of Lj x Lb contiguous
  // (lowering/recurrent_weight_layout.h).
  {
    std::vector<Var> a = st.args();
    Var bi = a[1], bo = a[4], d = a[5];
    // j % Lj, k, then j / Lj and the phase in the definition's order
    // (Stage::phases_within_tiles; Halide keeps it), step.
    std::vector<RVar> r = st.rvars(1);
    const RVar jtile = rec->phases_within_tiles ? r[3] : r[2], phase = rec->phases_within_tiles ? r[2] : r[3];
    const RVar inner = r[2], outer = r[3];  // of the tile and phase
    const int rows = recurrent_state_rows(lanes);
    st.compute_root().bound(bi, 0, rows);
    // The initial values (update 0, step 0's rows; the pure definition is
    // undefined): little work, serial (a parallel loop is a hand-over
    // between threads).
    st.update(0).vectorize(a[0], lanes, TailStrategy::GuardWithIf);
    // j % Lj vectorized: each vector's sum an
    // accumulator in a register over the chunk's terms of k (independent
    // FMA chains). Each j of a phase writes its own sum or state and reads
    // only its own or the last phase's and step's: no race between lanes.
    Halide::Stage u = st.update(1);
    u.allow_race_conditions();
    // From a tile of batch rows on: with AVX-512 a statement per row of
    // the tile (recurrent_row_statements), the rows unrolled inside the
    // chunk of k, so that each R vector is loaded once for them all and each
    // h(k) is one broadcast; with AVX2 the rows vectorized too (Halide's
    // nested vectorization), the statement one dense vector of 16 x 4, a
    // register tile of 2 x 4 vectors. With AVX-512, a batch of 4 to 7 rows
    // runs half tiles of 4 rows (a tile of 8 for 4 rows measured 1.35x the
    // taggers' time at batch 4, recurrent-2026-12-04-c.md).
    const int tile_min = kRecurrentTileMinRows;
    const bool row_statements = recurrent_row_statements(lanes);
    // One direction leaves the directions' parallel loop one task: from
    // rec->parallel_tiles_batch rows on, each phase's tiles of hidden units
    // run in parallel instead (a fork and join per step where the phases
    // run within each tile, else per phase and step; each tile writes its
    // own units and reads other units only of the last phase or step).
    // The tiles go in two halves, a task each: with a task a tile, OpenMP's
    // dynamic schedule gave a tile a different thread each step, and its
    // rows of R no home core's L2 (GRU, H 512, batch 2 on 2 threads: 1.9-2.8
    // ms against 1.3-1.4 in halves, recurrent-threads-2026-12-06.md). Two
    // tasks use two threads on a host of more cores.
    auto threads_of = [&](Halide::Stage s, bool tiles) {
      s.parallel(d);
      if (!tiles || rec->tiles < 2) return;
      RVar half("tiles_half"), tile("tile");
      s.split(jtile, half, tile, (rec->tiles + 1) / 2, TailStrategy::GuardWithIf).parallel(half);
    };
    auto rows_of_tile = [&](Halide::Stage s, const Var &v) {
      if (row_statements)
        s.unroll(v);
      else
        s.vectorize(v);
    };
    // The fewest batch rows whose steps share their tiles between threads
    // (0: never).
    const int shared_from = rec->parallel_tiles_batch;
    if (rec->batch.defined()) {
      auto full_tiles = [&](Halide::Stage full, bool tiles) {
        full.reorder(r[0], bi, r[1], bo, inner, outer, r[4], d).vectorize(r[0]);
        rows_of_tile(full, bi);
        full.unroll(phase);
        threads_of(full, tiles);
      };
      if (shared_from > rows) full_tiles(u.specialize(rec->batch >= shared_from), true);
      full_tiles(u.specialize(rec->batch >= rows), shared_from > 0 && shared_from <= rows);
      if (tile_min < rows) {
        auto half_tiles = [&](Halide::Stage half, bool tiles) {
          Var bio("b_io"), bii("b_ii");
          half.split(bi, bio, bii, tile_min).reorder(r[0], bii, r[1], bio, bo, inner, outer, r[4], d).vectorize(r[0]);
          rows_of_tile(half, bii);
          half.unroll(phase);
          threads_of(half, tiles);
        };
        if (shared_from > tile_min && shared_from < rows) half_tiles(u.specialize(rec->batch >= shared_from), true);
        half_tiles(u.specialize(rec->batch >= tile_min), shared_from > 0 && shared_from <= tile_min);
      }
    }
    // Smaller batches: a row per statement, rows past the batch skipped.
    auto small = [&](Halide::Stage s, bool tiles) {
      s.reorder(r[0], r[1], bi, bo, inner, outer, r[4], d).vectorize(r[0]).unroll(phase);
      threads_of(s, tiles);
    };
    if (rec->batch.defined() && shared_from > 1 && shared_from < tile_min)
      small(u.specialize(rec->batch >= shared_from), true);
    small(u, shared_from == 1);
  }

  // The outputs: copies of state rows, serial (a parallel loop is a
  // hand-over between threads that costs more than the copy).
  // A vector of a tile's kRecurrentStateLanes units is one dense load.
  for (auto &f : k.outputs)
    f.compute_root().vectorize(f.args()[0], kRecurrentStateLanes, TailStrategy::GuardWithIf);
  rep->template_name = "recurrent";
  return true;
}

}  // namespace disco
