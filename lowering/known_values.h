// The elements of a value that are known at compile time: constants, and
// shape values folded to dims (Shape -> Gather -> Concat chains). Inference
// and lowering both read them, through InferContext and LowerContext.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "frontend/errors.h"
#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

// Thrown when an op needs the elements of a value at compile time and they are
// not known. When the value is a graph input, a Session (driver/session.h)
// compiles at run time with the input's values as constants instead.
class ValueRequired : public Error {
 public:
  ValueRequired(int value_id, std::vector<int> from_inputs, const std::string &msg)
      : Error(msg), value_id(value_id), from_inputs(std::move(from_inputs)) {}
  int value_id;
  // The graph inputs the value is computed from (constants aside): binding
  // them as constants lets constant folding compute it.
  std::vector<int> from_inputs;
};

// Throws ValueRequired naming the node, the input and what needs it.
[[noreturn]] void value_required(const Graph &g, const Node &node, int input, const std::string &what);

// dims_value / ints_value of input `input` of `node`, which the op cannot do
// without: throws ValueRequired when not known.
std::vector<Dim> required_dims(const Graph &g, const Node &node, int input, const std::string &what);
std::vector<int64_t> required_ints(const Graph &g, const Node &node, int input, const std::string &what,
                                   const ShapeStore &store);

// Input `i` of `node` as a constant; null when it is omitted or not a constant.
const TensorData *constant_input(const Graph &g, const Node &node, size_t i);

// The elements of an integer value as dims; nullopt when not known, and for
// constants of more than 64 elements (data, not a shape: known_values.cc).
std::optional<std::vector<Dim>> dims_value(const Value &v);

// The elements of a constant value of any numeric dtype as doubles (float
// inputs such as Resize's scales); nullopt when not a constant.
std::optional<std::vector<double>> floats_value(const Value &v);

// The values of `dims` when each is a constant under `store` (a shape known
// at compile time); nullopt otherwise.
std::optional<std::vector<int64_t>> constant_dims(const std::vector<Dim> &dims, const ShapeStore &store);

// The shape of `node`'s one output when every dim is a non-negative constant
// under `store` (what a constant fold makes); nullopt otherwise.
std::optional<std::vector<int64_t>> constant_output_shape(const Graph &g, const Node &node, const ShapeStore &store);

// Like dims_value, but every element must be a constant under `store`; a
// constant of any size (Gather's indices are checked against their axis).
std::optional<std::vector<int64_t>> ints_value(const Value &v, const ShapeStore &store);

// Opset-aware: reads input `input` of `node` if present (newer opsets), else
// attribute `attr` (older ones). nullopt when neither is given. Throws naming
// the node when the input is present but not known at compile time.
std::optional<std::vector<int64_t>> ints_input_or_attr(const Graph &g, const Node &node, int input,
                                                       const std::string &attr, const ShapeStore &store);

// What is known of a value's elements at compile time, as text: its constant's
// dtype, shape and a hash of its bytes, or its shape-value dims, or "?".
std::string value_digest(const Value &v);
// A tensor's dtype, shape and a hash of its bytes, as text.
std::string tensor_digest(const TensorData &t);

}  // namespace disco
