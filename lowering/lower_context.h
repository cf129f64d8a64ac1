// What one op's Halide lowering sees. Tensors are Halide Funcs indexed in
// ONNX order (outermost first); HTensor::at() reverses the indices, since
// Halide's first dim is the innermost. Extents are symbolic: dim() turns a Dim
// into a Halide Expr over the kernel's symbol parameters.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "Halide.h"
#include "lowering/node_context.h"

namespace disco {

Halide::Type halide_type(DType t);

struct HTensor {
  Halide::Func f;
  DType dtype = DType::Undefined;
  Shape shape;          // ONNX order
  bool buffer = false;  // read straight from a kernel input or a constant: loads are cheap, nothing to recompute
  // A Transpose's output: its axis (ONNX order) that walks the input's
  // innermost axis, which the x86 schedule tiles with its own innermost one;
  // the Func it reads, which that schedule stages a block of at a time; and
  // the permutation (output axis i is the source's axis perm[i]).
  int transposed_inner = -1;
  Halide::Func transposed_source{};
  std::vector<int64_t> transposed_perm{};
  // A Concat along the innermost axis: each element selects its piece, so a
  // vector that the schedule cannot place within one piece reads every
  // piece lane by lane (the x86 loop schedule unrolls short rows for it).
  bool pieces_along_inner = false;
  int rank() const { return static_cast<int>(shape.size()); }
  Halide::Expr at(const std::vector<Halide::Expr> &idx) const;  // idx in ONNX order
};

// Maps shape symbols to the int32 scalar parameters of the kernel.
class SymbolParams {
 public:
  Halide::Expr expr(const Dim &d);
  Halide::Expr symbol(const std::string &name);
  // The parameters used so far, in symbol-name order (the kernel ABI order).
  std::vector<std::pair<std::string, Halide::Param<int32_t>>> used() const;

 private:
  std::map<std::string, Halide::Param<int32_t>> params_;
};

// Intermediate Funcs that a lowering creates and that the scheduler places,
// e.g. the row max and row sum of a Softmax.
//  - RowReduction: a reduction over the trailing axes (contiguous rows); its
//    pure dims are the kept outer axes. Materialized: once per row in stitch
//    schedules, at root otherwise.
//  - Reduction, Padded, Other: materialized at root.
//  - RowValues: a per-element Func of a row space that row reductions and
//    the output read more than once (a Softmax's exp). Stitch schedules
//    compute it per row, in cache; other schedules inline it, as if it were
//    no stage at all.
// DotOperand: the right operand of a MatMul/Gemm as a Func over (n, k,
// batch...) of the output's batch, views read through; unscheduled it is
// inlined, and the x86 dot template packs it per task (schedules/x86_dot_schedule.h)
// unless the weight was packed at compile time (`panel`, lowering/weight_layout.h).
// ConvInput: a float Conv's input over padded coordinates (zero outside the
// input); inlined unless a template copies the rows a task reads.
// RecurrentInput, Recurrence: an RNN/GRU/LSTM's input projection (a product
// over the input size for every step) and its recurrence (gate sums and
// states, one update over (j, k, phase, step)); placed by the x86 recurrent
// template (schedules/x86_recurrent_schedule.h), at root like Other elsewhere.
// WindowRows: a 2-D pool's pass along its inner spatial axis, over (n, c,
// input row, output column), that the output folds down its rows; the x86
// schedule computes it per output row, stored per plane (so each input row's
// pass runs once, not once per output row that reads it), at root elsewhere.
// PlanePass: a 2-D Resize's pass along its inner axis, over (output column,
// input row, c, n), that the output reads at rows chosen by a table; the x86
// schedule computes it per (n, c) plane (a plane's pass stays in cache, not
// written out whole and read back), at root elsewhere.
// Selection: a TopK's fold of its best k slots (int32 order, index, and
// maybe value) along its axis, a Tuple over the kept dims; the x86 schedule
// runs it per vector of the innermost kept dim, in the loop of a root copy
// that the outputs read (selection_in_copy), at root elsewhere.
enum class StageKind {
  RowReduction,
  Reduction,
  Padded,
  Other,
  RowValues,
  DotOperand,
  ConvInput,
  RecurrentInput,
  Recurrence,
  WindowRows,
  PlanePass,
  Selection
};
struct Stage {
  Halide::Func f;
  StageKind kind;
  int rank;  // number of pure dims
  // Set for folds: one update f = op(f, value) over an RDom whose first dim
  // is the innermost axis, op one of +, *, min, max (rfactor may split it);
  // the number of elements each result folds.
  Halide::Expr fold_extent;
  // Set for folds over axes: the extent of the innermost folded axis (the
  // RDom's first dim). Where it may be long, a template may sum it in blocks
  // (schedules/x86_schedule.cc, fold_at_root).
  std::optional<Dim> fold_inner;
  // An integer stage the schedules may vectorize as they do float ones: a
  // fold of order keys (math::max_key), an integer max or min with no
  // widening. Other integer stages stay scalar (x86_schedule.cc says why).
  bool vector_integers = false;
  // DotOperand only: > 0 when it reads a constant packed at compile time in
  // panels of this many columns of N (k-major within a panel), which the dot
  // template reads in place instead of packing.
  int panel = 0;
  // ConvInput only: the Conv reads its weight channels-last (lowering/weight_layout.h),
  // so a vector of output channels is one load; its sum stage is then over
  // flattened output positions, [s, m, n] (lowering/ops/window.h flat_domain).
  bool channels_last_weights = false;
  // PlanePass only, when its inner axis is scaled by a power of two s
  // (lower_resize): `phases` is s, and the pass reads `edge` (its input with
  // `edge_pad` repeated edge values on both sides of that axis) at
  // x / s + c(x % s), affine within each phase x % s: split by s, unrolled
  // and vectorized over x / s, its reads are dense loads.
  int phases = 0;
  Halide::Func edge{};
  // Recurrence only: the batch size (a template specializes batches of a
  // whole tile of rows, lowering/recurrent_weight_layout.h), the fewest
  // batch rows from which one direction's step has the work to share its
  // tiles of hidden units between threads (0: never), and the number of
  // those tiles in a phase (0 where the hidden size is symbolic).
  Halide::Expr batch{};
  int parallel_tiles_batch = 0;
  int tiles = 0;
  // Recurrence only: whether the update's RDom runs a tile's phases within
  // each tile (j % Lj, k, phase, j / Lj, step), not each phase over every
  // tile (j % Lj, k, j / Lj, phase, step); Halide keeps RVars in their
  // definition's order.
  bool phases_within_tiles = false;
  // RecurrentInput and Recurrence: the number of directions (1 or 2), for a
  // template to bound its direction axis with (one fused into a parallel
  // loop of tasks leaves bounds inference an extent of about the task count:
  // its buffer was 267x too big at 12,800 rows of X, 3.5 GB) and to choose
  // what a recurrence's threads share.
  int directions = 0;
};

class LowerContext : public NodeContext {
 public:
  LowerContext(const Graph &g, const Node &node, const ShapeStore &store, const OpDef &def, SymbolParams &syms,
               std::vector<std::optional<HTensor>> inputs, int f32_lanes = 8);

  const HTensor &in(int i) const;  // throws naming the node if missing
  // The float32 lanes of the target's vector registers (8: AVX2 or unknown,
  // 16: AVX-512). Lowerings are target-neutral except where the order of a
  // sum is sized to the register file (the recurrence's FMA chains); the
  // read is noted for the kernel's key.
  int f32_lanes() const;
  // decide(max |v| over input i's elements, when the graph bounds it;
  // lowering/value_bounds.h). The decision, not the bound, is noted for the
  // kernel's key: kernels that decide alike are the same code.
  bool input_bound_allows(int i, const std::function<bool(std::optional<double>)> &decide) const;

  const Shape &out_shape(int i) const;
  DType out_dtype(int i) const;

  Halide::Expr dim(const Dim &d) { return syms_.expr(store_.canonical(d)); }
  // Fresh pure vars for a tensor of this rank, in ONNX order.
  std::vector<Halide::Var> vars(int rank) const;
  std::vector<Halide::Expr> exprs(const std::vector<Halide::Var> &v) const;
  // A new Func named after this node.
  Halide::Func func(const std::string &suffix) const;
  // Defines output i as f(vars) = value (vars in ONNX order).
  void define_output(int i, const std::vector<Halide::Var> &vars, const Halide::Expr &value);
  void set_output(int i, Halide::Func f);
  // Output i reads `source` permuted by `perm`: its `axis` walks the source's innermost axis.
  void set_transposed_inner(int i, int axis, Halide::Func source, std::vector<int64_t> perm) {
    outputs_.at(i).transposed_inner = axis;
    outputs_.at(i).transposed_source = std::move(source);
    outputs_.at(i).transposed_perm = std::move(perm);
  }
  void set_pieces_along_inner(int i) { outputs_.at(i).pieces_along_inner = true; }
  // Reads input i broadcast to the output's index space (numpy rules).
  Halide::Expr broadcast_read(int i, const std::vector<Halide::Expr> &out_idx, const Shape &out_shape);
  // Returns the stage, for the fields of its kind (panel, channels_last_weights).
  Stage &add_stage(Halide::Func f, StageKind kind, int rank, Halide::Expr fold_extent = Halide::Expr());

  const std::vector<HTensor> &outputs() const { return outputs_; }
  const std::vector<Stage> &stages() const { return stages_; }
  // Dims that broadcast_read could not prove != 1 and reads through a
  // select(dim == 1, 0, i): schedules specialize for the case where none is 1.
  const std::vector<Dim> &maybe_broadcast() const { return maybe_broadcast_; }

 private:
  SymbolParams &syms_;
  std::vector<std::optional<HTensor>> inputs_;
  int f32_lanes_;
  std::vector<HTensor> outputs_;
  std::vector<Stage> stages_;
  std::vector<Dim> maybe_broadcast_;
};

// Expr helpers shared by op families.
Halide::Expr cast_to(DType t, const Halide::Expr &e);
Halide::Expr zero_of(DType t);
Halide::Expr lowest_of(DType t);

}  // namespace disco
