// The base of the x86 and GPU schedule templates (x86_schedule.h,
// gpu_schedule.h): which template a kernel gets, and what both sets of
// templates ask of a kernel and its shape store — extents, output bounds,
// the predicates of specialize() branches, row folds split for rfactor,
// fused runs of loop vars. A target's scheduler keeps only its templates.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "Halide.h"
#include "lowering/lower_graph.h"
#include "lowering/shape_store.h"
#include "schedules/fusion.h"

namespace disco {

// A specialize() branch of a kernel's root, for tests and --verbose.
struct ScheduleBranch {
  std::string name;  // "hint", "small" or "dense"
  Halide::Expr condition;
};

struct ScheduleReport {
  std::string template_name;             // "loop", "stitch", "generic", "gpu-loop", ...
  std::vector<ScheduleBranch> branches;  // in the order they are tried; the generic branch follows
  std::string describe() const;          // "stitch, branches: small, dense"
};

// An extent, with its value where the shape store knows it at compile time.
struct KnownExtent {
  Halide::Expr expr;
  std::optional<int64_t> value;
  bool at_least(int64_t v) const { return value && *value >= v; }
  bool below(int64_t v) const { return value && *value < v; }
};

// A specialize() branch of a template and what the shape store decides of
// its condition at compile time.
struct TemplateBranch {
  std::string name;
  Halide::Expr condition;
  bool always = false;  // the store proves it
  bool never = false;   // the store disproves it
};

// Calls schedule(i, in) for each branch i that may be taken, in order, where
// in(stage) is that stage's specialization for the branch; a branch the store
// proves gets the stages themselves (in(stage) == stage) and ends the list.
// Adds the specialized branches to rep->branches. Returns true when a proven
// branch was scheduled: no generic schedule is left to write.
bool schedule_branches(
    const std::vector<TemplateBranch> &branches, ScheduleReport *rep,
    const std::function<void(size_t, const std::function<Halide::Stage(Halide::Stage)> &)> &schedule);

// A kernel of one float32 output (a pure Func of rank >= min_rank) over one
// Reduction stage of its rank (or [s, m, n] for a Conv that reads channels-last
// weights) with one update that writes its pure vars, and one stage of kind
// `operand` of the output's rank: nothing else.
struct ProductKernel {
  Halide::Func out, sum;
  Stage operand;
};
std::optional<ProductKernel> find_product_kernel(const LoweredKernel &k, StageKind operand, int min_rank);

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // Bounds the outputs, then schedules the kernel with the template of its
  // group kind where that applies — stitch for a stitch kernel (row
  // reductions and row values over the one output's rows), loop for
  // elementwise outputs with no stages — and with the generic one otherwise.
  ScheduleReport run(GroupKind kind);

 protected:
  Scheduler(LoweredKernel &k, const ShapeStore &store) : k_(k), store_(store) {}

  // `row_dims`: how many trailing dims of the output make a row (at least 1).
  virtual ScheduleReport stitch(int row_dims) = 0;
  virtual ScheduleReport loop() = 0;
  // Input, dot and opaque kernels, and loop or stitch kernels that are not
  // of that form.
  virtual ScheduleReport generic(GroupKind kind) = 0;

  Halide::Expr extent(const Dim &d) const { return k_.syms.expr(store_.canonical(d)); }
  KnownExtent known_extent(const Dim &d) const;
  const Shape &output_shape(size_t i) const { return k_.tensors.at(k_.output_values.at(i)).shape; }

  // Predicates of specialize() branches, undefined where the store decides
  // them at compile time. hint: every hinted symbol of the kernel at its
  // likely value (--hint). dense: no dim that might broadcast is 1 and the
  // innermost extent of `out` is a multiple of `width` (no tail).
  Halide::Expr hint_condition() const;
  Halide::Expr dense_condition(const Shape &out, int width) const;

  LoweredKernel &k_;
  const ShapeStore &store_;

 private:
  void bound_outputs();
  int stitch_row_dims() const;
  bool elementwise_outputs() const;
};

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

// A row fold (update 0 over an RDom whose first dim is the innermost axis,
// with at least one RVar) split for a parallel fold: its innermost RVar split
// by `width`, the inner part rfactored into `partials`, one per `lane`; f's
// update then folds the partials over `inner`. The caller places `partials`.
struct SplitFold {
  Halide::Func partials;
  Halide::Var lane;
  Halide::RVar inner;
};
SplitFold split_fold(Halide::Func f, int width);

}  // namespace disco
