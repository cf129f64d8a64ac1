#include "lowering/constant_arithmetic.h"

#include <cmath>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "frontend/attributes.h"
#include "lowering/element_walk.h"
#include "lowering/known_values.h"
#include "lowering/op_registry.h"

namespace disco {

namespace {

using Dims = std::vector<int64_t>;

bool is_real(DType t) { return t == DType::F32 || t == DType::F64; }

// Integer dtypes whose every value is an int64 (not U64), and bool.
bool is_integral(DType t) {
  switch (t) {
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U8:
    case DType::U16:
    case DType::U32:
    case DType::Bool:
      return true;
    default:
      return false;
  }
}

bool evaluable(DType t) { return is_real(t) || is_integral(t); }

// Whether double holds integer v exactly (|v| <= 2^53): beyond, converting
// it to a float32 would round twice.
bool exact_in_double(int64_t v) { return v <= (int64_t(1) << 53) && v >= -(int64_t(1) << 53); }

// The folded elements, in order, as int64 (integral dtypes, wrapped to the
// dtype at the end) or double (rounded once to the dtype at the end).
class Elements {
 public:
  Elements(DType t, Dims shape) : out_(t, std::move(shape)) {}
  void put_int(int64_t v) { ints_.push_back(v); }
  void put_real(double v) {
    const int64_t i = n_++;
    if (out_.dtype == DType::F32)
      out_.mutable_as<float>()[i] = static_cast<float>(v);
    else
      out_.mutable_as<double>()[i] = v;
  }
  TensorData take() {
    return is_real(out_.dtype) ? std::move(out_) : TensorData::from_ints(out_.dtype, ints_, out_.shape);
  }

 private:
  TensorData out_;
  std::vector<int64_t> ints_;
  int64_t n_ = 0;
};

// Calls element(at) for each output element in order, at[k] the index of
// operand k's element (numpy broadcasting: element_walk.h). Stops when
// element returns false; false then, and when an operand does not broadcast
// to `out`.
template <class Element>
bool for_each_element(const Dims &out, const std::vector<const TensorData *> &ins, Element &&element) {
  std::vector<Dims> steps;
  for (const TensorData *in : ins) {
    std::optional<Dims> s = element_walk::broadcast_steps(in->shape, out);
    if (!s) return false;
    steps.push_back(std::move(*s));
  }
  return element_walk::for_each_position(out, Dims(ins.size(), 0), steps, element);
}

using Operands = std::vector<const TensorData *>;

// An op of the unary, binary or compare family, through its element folds.
std::optional<TensorData> fold_family(const OpMath &math, const Operands &in, DType out_t, const Dims &shape) {
  const DType t = in[0]->dtype;
  const bool real = is_real(t);
  Elements out(out_t, shape);
  auto ints = [&](const int64_t *at, int k) { return in[k]->int_at(at[k]); };
  auto reals = [&](const int64_t *at, int k) { return in[k]->float_at(at[k]); };
  bool done = false;
  if (const auto *u = std::get_if<UnaryMath>(&math)) {
    if (in.size() != 1 || (real ? !u->reals : !u->ints)) return std::nullopt;
    done = for_each_element(shape, in, [&](const int64_t *at) {
      if (real) {
        auto r = u->reals(reals(at, 0));
        return r ? (out.put_real(*r), true) : false;
      }
      auto r = u->ints(ints(at, 0));
      return r ? (out.put_int(*r), true) : false;
    });
  } else if (const auto *b = std::get_if<BinaryMath>(&math)) {
    if (in.size() != 2 || in[1]->dtype != t || (real ? !b->reals : !b->ints)) return std::nullopt;
    done = for_each_element(shape, in, [&](const int64_t *at) {
      if (real) {
        auto r = b->reals(reals(at, 0), reals(at, 1));
        return r ? (out.put_real(*r), true) : false;
      }
      auto r = b->ints(ints(at, 0), ints(at, 1));
      return r ? (out.put_int(*r), true) : false;
    });
  } else if (const auto *c = std::get_if<CompareMath>(&math)) {
    if (in.size() != 2 || in[1]->dtype != t || (real ? !c->reals : !c->ints)) return std::nullopt;
    done = for_each_element(shape, in, [&](const int64_t *at) {
      out.put_int(real ? c->reals(reals(at, 0), reals(at, 1)) : c->ints(ints(at, 0), ints(at, 1)));
      return true;
    });
  }
  if (!done) return std::nullopt;
  return out.take();
}

// ONNX Mod of integers (integer_ops.cc's int_mod): the remainder takes the
// divisor's sign (fmod = 0, Python's) or the dividend's (fmod = 1, C's). A
// remainder by 0 is left to the kernel.
std::optional<TensorData> mod(const Node &n, const Operands &in, const Dims &shape) {
  const DType t = in[0]->dtype;
  if (in.size() != 2 || !is_integral(t) || t == DType::Bool || in[1]->dtype != t) return std::nullopt;
  const bool c_sign = AttrReader(n.attrs, n.where()).get_int("fmod", 0) != 0;
  Elements out(t, shape);
  bool done = for_each_element(shape, in, [&](const int64_t *at) {
    const int64_t a = in[0]->int_at(at[0]), b = in[1]->int_at(at[1]);
    if (b == 0) return false;
    int64_t r = b == -1 ? 0 : a % b;  // C's: the dividend's sign (INT64_MIN % -1 is UB)
    if (!c_sign && r != 0 && ((r < 0) != (b < 0))) r += b;
    out.put_int(r);
    return true;
  });
  return done ? std::optional<TensorData>(out.take()) : std::nullopt;
}

// Pow of a float base (lower_pow): the exponent, of any evaluable dtype, is
// first rounded to the base's dtype, as the kernel casts it; the result is
// C's pow in double (its special values, as math::pow's) rounded once. The
// kernel's math::pow is within an ulp of that, its pow_int (small integer
// exponents, by products) within a few: a fold may differ from the kernel's
// answer by that rounding. Integer bases are left to the kernel.
std::optional<TensorData> power(const Operands &in, DType out_t, const Dims &shape) {
  const DType t = in[0]->dtype;
  if (in.size() != 2 || !is_real(t) || out_t != t) return std::nullopt;
  Elements out(t, shape);
  bool done = for_each_element(shape, in, [&](const int64_t *at) {
    double y;
    if (is_real(in[1]->dtype)) {
      y = in[1]->float_at(at[1]);
    } else {
      const int64_t v = in[1]->int_at(at[1]);
      if (!exact_in_double(v)) return false;
      y = static_cast<double>(v);
    }
    if (t == DType::F32) y = static_cast<float>(y);
    out.put_real(std::pow(in[0]->float_at(at[0]), y));
    return true;
  });
  return done ? std::optional<TensorData>(out.take()) : std::nullopt;
}

// Where copies elements of X or Y, of any dtype.
std::optional<TensorData> where(const Operands &in, DType out_t, const Dims &shape) {
  if (in.size() != 3 || in[0]->dtype != DType::Bool || in[1]->dtype != out_t || in[2]->dtype != out_t)
    return std::nullopt;
  TensorData out(out_t, shape);
  const size_t es = dtype_size(out_t);
  int64_t i = 0;
  bool done = for_each_element(shape, in, [&](const int64_t *at) {
    const int k = in[0]->as<uint8_t>()[at[0]] ? 1 : 2;
    std::memcpy(out.mutable_data() + static_cast<size_t>(i++) * es, in[k]->data() + static_cast<size_t>(at[k]) * es,
                es);
    return true;
  });
  return done ? std::optional<TensorData>(std::move(out)) : std::nullopt;
}

// The range of an integral dtype, for float-to-integer casts.
bool fits(double x, DType t) {
  switch (t) {
    case DType::I8:
      return x >= -128.0 && x <= 127.0;
    case DType::I16:
      return x >= -32768.0 && x <= 32767.0;
    case DType::I32:
      return x >= -0x1p31 && x < 0x1p31;
    case DType::I64:
      return x >= -0x1p63 && x < 0x1p63;
    case DType::U8:
      return x >= 0 && x <= 255.0;
    case DType::U16:
      return x >= 0 && x <= 65535.0;
    case DType::U32:
      return x >= 0 && x < 0x1p32;
    default:
      return false;
  }
}

// Cast as lower_cast does: integers wrap, floats to integers truncate toward
// zero, to bool is != 0 (NaN too). Floats out of an integer dtype's range
// (undefined in the kernel), and integers beyond 2^53 to float32 (which
// double would round twice), are left to the kernel.
std::optional<TensorData> cast(const Operands &in, DType to, const Dims &shape) {
  const DType from = in[0]->dtype;
  if (in.size() != 1) return std::nullopt;
  Elements out(to, shape);
  bool done = for_each_element(shape, in, [&](const int64_t *at) {
    if (is_integral(from)) {
      const int64_t x = in[0]->int_at(at[0]);
      if (!is_real(to)) return out.put_int(x), true;
      if (!exact_in_double(x)) return false;
      return out.put_real(static_cast<double>(x)), true;
    }
    const double x = in[0]->float_at(at[0]);
    if (is_real(to)) return out.put_real(x), true;
    if (to == DType::Bool) return out.put_int(x != 0), true;
    if (std::isnan(x) || !fits(std::trunc(x), to)) return false;
    return out.put_int(static_cast<int64_t>(std::trunc(x))), true;
  });
  return done ? std::optional<TensorData>(out.take()) : std::nullopt;
}

}  // namespace

std::optional<TensorData> fold_by_arithmetic(const Graph &g, const Node &n, const ShapeStore &store) {
  // Before opset 7, binary ops may broadcast B at an axis (legacy), not numpy's way.
  if ((n.domain != "" && n.domain != "ai.onnx") || n.opset < 7) return std::nullopt;
  const std::optional<Dims> out_shape = constant_output_shape(g, n, store);
  if (!out_shape || n.inputs.empty()) return std::nullopt;
  const Dims &shape = *out_shape;
  const Value &ov = g.value(n.outputs[0]);
  Operands in;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const TensorData *t = constant_input(g, n, i);
    if (!t) return std::nullopt;
    in.push_back(t);
  }
  const std::string &op = n.op_type;
  if (op == "Where") return where(in, ov.dtype, shape);
  for (const TensorData *t : in)
    if (!evaluable(t->dtype)) return std::nullopt;
  if (!evaluable(ov.dtype)) return std::nullopt;
  if (op == "Cast") return cast(in, ov.dtype, shape);
  if (op == "Mod") return mod(n, in, shape);
  if (op == "Pow") return power(in, ov.dtype, shape);
  const OpDef *def = OpRegistry::global().find(n.domain, op, n.opset);
  if (!def) return std::nullopt;
  return fold_family(def->math, in, ov.dtype, shape);
}

}  // namespace disco
