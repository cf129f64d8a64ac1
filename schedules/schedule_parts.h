// Pieces that the x86 and GPU schedule templates share: fusing a run of
// loop vars, telling whether an update writes the pure vars, and recognising
// a stitch kernel (row reductions and row values over one output's rows).
#pragma once
#include <string>
#include <vector>

#include "Halide.h"
#include "lowering/lower_graph.h"

namespace disco {

// The update writes f(args...) with exactly the pure vars, so its pure loops
// can be split, parallelized or mapped onto blocks like the pure definition's.
bool update_writes_pure_vars(const Halide::Func &f, int u);

// Fuses vars[from..to) (Halide order, innermost first) into one var, the
// outermost varying slowest; returns it.
template <class S>
Halide::Var fuse_range(S stage, const std::vector<Halide::Var> &vars, size_t from, size_t to) {
  Halide::Var outer = vars[to - 1];
  for (size_t i = to - 1; i-- > from;) {
    Halide::Var fused(outer.name() + "_" + vars[i].name());
    stage.fuse(vars[i], outer, fused);
    outer = fused;
  }
  return outer;
}

// For a kernel with one output whose stages are row reductions over the
// output's trailing dims and RowValues of the output's rank: the number of
// those trailing (row) dims. 0 when the kernel is not such a stitch, or has
// one row only or no rows, where going row by row gains nothing.
int stitch_row_dims(const LoweredKernel &k);

}  // namespace disco
