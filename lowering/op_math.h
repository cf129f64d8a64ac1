// What an op of a shared family computes, carried on its OpDef
// (op_registry.h) so that the family's one inference and one lowering call
// it: unary and binary elementwise ops, comparisons and Reduce*. An op's
// expression, its fold over shape values and its fold over the elements of
// constants stand once, at its registration.
#pragma once
#include <cstdint>
#include <optional>
#include <variant>

#include "frontend/dim.h"
#include "frontend/dtype.h"

namespace Halide {
struct Expr;
struct Type;
}  // namespace Halide

namespace disco {

class ShapeStore;

class AttrReader;

// What a unary expression may read besides its element.
struct UnaryArgs {
  DType dtype;              // the input's
  const AttrReader &attrs;  // the node's
};

// The element fold functions below (`ints`, `reals`) compute the op on one
// element of constants, so that constant folding needs no JIT compile
// (lowering/constant_arithmetic.h). Integers and bools compute in int64 and
// wrap to the dtype after; floats compute in double and round once to the
// dtype, which is the float32 op's own result only for ops exact in double
// (+, -, *, /, negation, comparisons), so only those carry `reals`. nullopt:
// the element does not fold (a division by 0), and the node then folds
// through the JIT. Null: the op's constants fold through the JIT.

// y = expr(x), elementwise.
struct UnaryMath {
  Halide::Expr (*expr)(const Halide::Expr &x, const UnaryArgs &args) = nullptr;
  // The op on folded integer shape values; null: not folded.
  Dim (*dims)(const Dim &x) = nullptr;
  std::optional<int64_t> (*ints)(int64_t x) = nullptr;
  std::optional<double> (*reals)(double x) = nullptr;
};

// y = expr(a, b), elementwise with numpy broadcasting; t is a's dtype.
struct BinaryMath {
  Halide::Expr (*expr)(const Halide::Expr &a, const Halide::Expr &b, DType t) = nullptr;
  // The op on folded integer shape values, nullopt where it cannot fold
  // (a division by 0, or by a value of unknown sign); null: not folded. The
  // store gives the operands' signs (Div truncates toward zero).
  std::optional<Dim> (*dims)(const Dim &a, const Dim &b, const ShapeStore &store) = nullptr;
  bool same_dtypes = true;  // false: b may have another dtype (Pow's exponent)
  std::optional<int64_t> (*ints)(int64_t a, int64_t b) = nullptr;
  std::optional<double> (*reals)(double a, double b) = nullptr;
};

// What the shape store knows of the sign of a - b, for two shape values.
struct DimSign {
  bool zero, pos, neg, nonneg, nonpos;
};

// A comparison or logical op: bool y = expr(a, b), elementwise.
struct CompareMath {
  Halide::Expr (*expr)(const Halide::Expr &a, const Halide::Expr &b) = nullptr;
  // The comparison of two shape values from the sign of their difference,
  // nullopt when that does not decide it. Null for logical ops, which take
  // bools only.
  std::optional<bool> (*dims)(const DimSign &d) = nullptr;
  bool (*ints)(int64_t a, int64_t b) = nullptr;
  bool (*reals)(double a, double b) = nullptr;  // null for logical ops
};

// Reduce*: y = finalize(update(...update(init, element(x0))..., element(xn)), n)
// over the reduced elements, in the accumulation type. The variadic Min, Max,
// Sum and Mean fold over their inputs with it too (no init: input 0 starts).
struct ReduceMath {
  const char *stage = "";  // the name of the fold's Func
  Halide::Expr (*init)(const Halide::Type &t) = nullptr;
  Halide::Expr (*update)(const Halide::Expr &acc, const Halide::Expr &v) = nullptr;
  Halide::Expr (*element)(const Halide::Expr &x) = nullptr;                                   // null: x
  Halide::Expr (*finalize)(const Halide::Expr &folded, const Halide::Expr &count) = nullptr;  // null: folded
  // Set for max and min (math::max_key, math::min_key): a float fold runs
  // on these keys, with update on the keys, and the result is
  // math::from_key of the fold (see math_library.h for why).
  Halide::Expr (*float_key)(const Halide::Expr &x) = nullptr;
  // Two elements of a folded integer shape value combined, for a reduction of
  // one (Flatten's ReduceProd of a Shape); null: not folded.
  Dim (*dims)(const Dim &a, const Dim &b, const ShapeStore &store) = nullptr;
};

using OpMath = std::variant<std::monostate, UnaryMath, BinaryMath, CompareMath, ReduceMath>;

}  // namespace disco
