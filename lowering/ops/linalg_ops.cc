// Det: Gaussian elimination with partial pivoting over symbolic [.., n, n]
// matrices, as one Halide scan. A data-dependent pivot order does not fit
// Halide's pure definitions, so the elimination is a single update over an
// RDom (t, k): for each step k an inner counter t walks through the phases
// of that step in order, and each (t, k) writes one cell of a working Func.
// Rows are never swapped: a pivot row is marked used instead, and the sign of
// the permutation is tracked by counting inversions as pivots are taken.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;

void infer_det(InferContext &c) {
  const Shape &s = c.shape(0);
  if (s.size() < 2) c.fail("input must have rank >= 2, got ", shape_str(s));
  if (!dtype_is_float(c.dtype(0))) c.fail("input must be a float tensor, got ", dtype_name(c.dtype(0)));
  c.require_equal(s[s.size() - 2], s.back(), "Det needs square matrices");
  c.set_output(0, c.dtype(0), Shape(s.begin(), s.end() - 2));
}

// The working Func W, per batch index, in float64:
//   W[i][j], i, j < n   the matrix, eliminated in place
//   W[i][n], i < n      1 once row i has been a pivot row
//   W[n][0]             the pivot row of the current step (-1: none yet)
//   W[n][1]             the determinant so far
// Step k (of n) runs these phases, one cell per t:
//   t = 0                  W[n][0] = -1
//   t = 1 .. n             pivot search over unused rows i = t-1
//   t = n+1 .. 2n          each used row above the pivot is one inversion: det = -det
//   t = 2n+1               det *= pivot
//   t = 2n+2 .. 3n+1       mark the pivot row used
//   t = 3n+2 .. 3n+1+n*n   eliminate column k from the unused rows
void lower_det(LowerContext &c) {
  const HTensor &in = c.in(0);
  int batch_rank = in.rank() - 2;
  Expr n = c.dim(in.shape.back());
  Halide::Type f = Halide::Float(64);
  auto bv = c.vars(batch_rank);
  auto batch = c.exprs(bv);
  Halide::Var row("row"), col("col");
  Func w = c.func("lu");
  auto at = [&](const Expr &i, const Expr &j) {
    std::vector<Expr> idx = batch;
    idx.push_back(i);
    idx.push_back(j);
    return w(reversed(idx));
  };
  auto lhs = [&](const Expr &i, const Expr &j) {
    std::vector<Expr> idx = batch;
    idx.push_back(i);
    idx.push_back(j);
    return reversed(idx);
  };
  {
    std::vector<Expr> ii = batch;
    ii.push_back(clamp_index(c, row, in.shape.back()));
    ii.push_back(clamp_index(c, col, in.shape.back()));
    std::vector<Halide::Var> pure = bv;
    pure.push_back(row);
    pure.push_back(col);
    w(reversed(pure)) = Halide::select(row < n && col < n, Halide::cast(f, in.at(ii)),
                                       row == n && col == 1, Halide::cast(f, 1), Halide::cast(f, 0));
  }
  Halide::RDom r({{0, 3 * n + 2 + n * n}, {0, n}});
  Expr t = r.x, k = r.y;
  auto row_of = [&](const Expr &e) { return Halide::clamp(e, 0, Halide::max(n - 1, 0)); };
  Expr pivot_row = at(n, 0);
  Expr p = row_of(Halide::cast(Halide::Int(32), pivot_row));
  Expr det = at(n, 1);
  auto used = [&](const Expr &i) { return at(i, n) != 0; };
  // Phase indices, clamped so that bounds inference sees rows and columns in range.
  Expr i_search = row_of(t - 1), i_sign = row_of(t - n - 1), i_mark = row_of(t - 2 * n - 2);
  Expr e = Halide::max(t - 3 * n - 2, 0);
  Expr i_elim = row_of(e / Halide::max(n, 1)), j_elim = row_of(e % Halide::max(n, 1));
  Expr pivot = at(p, k);

  Expr better = !used(i_search) && (pivot_row < 0 || Halide::abs(at(i_search, k)) > Halide::abs(pivot));
  Expr search = Halide::select(better, Halide::cast(f, i_search), pivot_row);
  Expr sign = Halide::select(used(i_sign) && i_sign > p, -det, det);
  Expr mark = Halide::select(i_mark == p, Halide::cast(f, 1), at(i_mark, n));
  Expr old = at(i_elim, j_elim);
  Expr eliminate = Halide::select(!used(i_elim) && j_elim > k && pivot != 0,
                                  old - at(i_elim, k) / pivot * at(p, j_elim), old);

  Expr dst_row = Halide::select(t <= 2 * n + 1, n, t <= 3 * n + 1, i_mark, i_elim);
  Expr dst_col = Halide::select(t <= n, 0, t <= 2 * n + 1, 1, t <= 3 * n + 1, n, j_elim);
  Expr value = Halide::select(t == 0, Halide::cast(f, -1), t <= n, search, t <= 2 * n, sign, t == 2 * n + 1,
                              det * pivot, t <= 3 * n + 1, mark, eliminate);
  w(lhs(dst_row, dst_col)) = value;
  c.add_stage(w, StageKind::Other, batch_rank + 2);
  c.define_output(0, bv, at(n, 1));
}

}  // namespace

void register_linalg_ops(OpRegistry &r) { r.add("Det", 11, OpKind::Opaque, infer_det, lower_det); }

}  // namespace disco
