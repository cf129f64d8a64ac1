// Helpers that more than one op family under lowering/ops/ needs. Each op
// file keeps what only it uses; what is here has one definition for all.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "Halide.h"
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"

namespace disco {

// ---- axes --------------------------------------------------------------------

// Negative axes count from the end. Inference and lowering both call it, so
// that lowering re-derives the same axes as inference; throws naming the node
// when the axis is out of range.
int64_t normalize_axis(const NodeContext &c, int64_t axis, int64_t rank);

// normalize_axis over a list, in the given order; an axis named twice is an error.
std::vector<int64_t> normalize_axes(const NodeContext &c, const std::vector<int64_t> &axes, int64_t rank);

// ---- Halide indexing ----------------------------------------------------------

// Halide's first dim is the innermost, ONNX's the outermost: Func definitions
// and calls take their indices reversed.
template <class T>
std::vector<T> reversed(const std::vector<T> &v) {
  return {v.rbegin(), v.rend()};
}

// An RDom over `extents` given in ONNX order (Halide wants the innermost first).
Halide::RDom make_rdom(LowerContext &c, const std::vector<Dim> &extents);
// The variables of an RDom made by make_rdom, back in ONNX order.
std::vector<Halide::Expr> rdom_vars(const Halide::RDom &r);

// Clamping is a no-op for valid indices; it tells Halide's bounds inference
// that the read stays inside the input.
Halide::Expr clamp_index(LowerContext &c, const Halide::Expr &i, const Dim &extent);

// Reads operand `i` of a (batched) matrix product at the output's batch index
// `batch_idx` (extents `batch_shape`, numpy-broadcast) plus its own last two
// indices `tail` (one index for a 1-D operand).
Halide::Expr matmul_read(LowerContext &c, int i, const std::vector<Halide::Expr> &batch_idx, const Shape &batch_shape,
                         const std::vector<Halide::Expr> &tail);

// The right operand of a matrix product as a DotOperand stage rhs(n, k,
// rest...) = read(n, k): `rest` are the output's other vars (Halide order),
// so a batched operand keeps its batch. `panel` > 0: read() reads a weight
// packed in panels of that width (dot_ops.cc's packed_b). Returns a reader of
// it for the product. Every dot product reads its right operand this way:
// the x86 dot template packs it per task, and the GPU's shared-memory
// template stages its tiles through it (two operands read straight by one
// product and staged gave wrong integer sums on PoCL wherever n's tile was
// partial; through this stage they are right).
std::function<Halide::Expr(const Halide::Expr &n, const Halide::Expr &k)> dot_operand(
    LowerContext &c, const std::vector<Halide::Var> &rest,
    const std::function<Halide::Expr(const Halide::Expr &, const Halide::Expr &)> &read, int panel = 0);

// Reads a scalar tensor (or a one-element one of any rank).
Halide::Expr scalar_read(const HTensor &t);

// ---- folds ---------------------------------------------------------------------

// The steps a fold combines elements with, and the mean's finish: shared by
// Reduce* (over an axis) and the variadic Min, Max, Sum and Mean (over inputs).
Halide::Expr sum_of(const Halide::Expr &a, const Halide::Expr &b);
Halide::Expr product_of(const Halide::Expr &a, const Halide::Expr &b);
// max_of and min_of return a NaN operand (math::max, math::min), as numpy's
// and PyTorch's max and amax do.
Halide::Expr max_of(const Halide::Expr &a, const Halide::Expr &b);
Halide::Expr min_of(const Halide::Expr &a, const Halide::Expr &b);
Halide::Expr mean_of(const Halide::Expr &sum, const Halide::Expr &count);

// ---- binary broadcasting --------------------------------------------------------

// The output shape of a binary elementwise op: numpy broadcasting from
// opset 7; before it, A's shape, B lined up with A's dims at the `axis`
// attribute (default: A's last dims) where broadcast=1 (each of B's dims
// A's or 1), else B must have A's shape. Throws naming the dim at fault.
Shape infer_binary_shape(InferContext &c);
// Operand i (0: A, 1: B) of such an op at the output index `oi` (shape `os`).
Halide::Expr read_binary_operand(LowerContext &c, int i, const std::vector<Halide::Expr> &oi, const Shape &os);

// ---- types -------------------------------------------------------------------

// The type sums and products accumulate in: half types lose too much
// precision when summed in their own type, so they accumulate in float32.
Halide::Type acc_type(DType t);

// ---- unary float ops -----------------------------------------------------------

// An elementwise op of one float input (opset 1 on), registered with its
// expression: inference wants a float input and gives the output its dtype and
// shape; lowering hands the expression the element in its accumulation type,
// since Halide's math wants float32 or float64. `since`: the first opset.
void add_float_unary(OpRegistry &r, const char *op, UnaryMath m, int since = 1);

// Inference of an elementwise op of one numeric (not bool) input: the output
// has the input's dtype and shape.
void infer_numeric_unary(InferContext &c);

// ---- folded shape values -------------------------------------------------------

// Shape values are folded only while they stay this small (as set_constant does).
constexpr int64_t kMaxFolded = 64;

// Folded shape values stay this short, as text: Dim's substitutions and
// bounds walk an expression as a tree, and a chain of pads, clamps and
// divisions (Swin's four stages of windows) nests past what they finish in
// reasonable time. Longer values are left to run time, as any unknown one.
// 160 was too short for a detector's anchor counts (a product of three
// extents of maps several strides down); at 1000 Swin-T still inspects in
// about 2 s.
constexpr size_t kMaxFoldedText = 1000;

// The sign of a shape value used as a divisor, from the store's bounds: true
// where it is at least 0 (an extent may be 0; dividing by it is a run-time
// error either way), false where at most 0, nullopt where either may hold.
std::optional<bool> divisor_is_positive(const Dim &y, const ShapeStore &st);

// Folds a binary elementwise op of two integer shape values (at most 1-D, one
// of them broadcast where it has a single element) into output 0, element by
// element with `f`; folds nothing where `f` gives nullopt for any element, or
// a value longer than kMaxFoldedText.
void fold_binary_dims(InferContext &c, const Shape &out,
                      const std::function<std::optional<Dim>(const Dim &, const Dim &)> &f);

// Folds an output's elements to dims when downstream shape arithmetic can use
// them: small integer tensors of rank <= 1.
void fold_dims(InferContext &c, int out, const Shape &shape, DType t, const std::vector<Dim> &vals);

// Passes folded shape values of input 0 through ops that do not change the elements.
void fold_passthrough(InferContext &c, const Shape &out);

}  // namespace disco
