// What one op's shape inference sees: its node, inputs (dtype, shape, and the
// values known at compile time), the attribute parser and the shape store.
// Inference sets each output's dtype and shape and, where it can, folds the
// output's value (constants, or shape values as dims) for the ops downstream.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "frontend/attributes.h"
#include "frontend/errors.h"
#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

class InferContext {
 public:
  InferContext(Graph &g, int node_index, ShapeStore &store);

  const Node &node() const { return node_; }
  const AttrReader &attrs() const { return attrs_; }
  int opset() const { return node_.opset; }
  std::string where() const { return node_.where(); }
  ShapeStore &store() { return store_; }

  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && node_.inputs[i] >= 0; }
  const Value &input(int i) const;  // throws naming the node if missing
  DType dtype(int i) const { return input(i).dtype; }
  const Shape &shape(int i) const;
  int rank(int i) const { return static_cast<int>(shape(i).size()); }
  const TensorData *constant(int i) const;
  // The elements of an integer input when known at compile time: constants, or
  // shape values folded to dims (lowering/known_values.h, shared with lowering).
  std::optional<std::vector<Dim>> dims_value(int i) const;
  // Like dims_value, but every element must be a constant.
  std::optional<std::vector<int64_t>> ints_value(int i) const;
  // Input `input` if present (newer opsets), else attribute `attr` (older
  // ones); throws when the input is present but not known at compile time.
  std::optional<std::vector<int64_t>> ints_input_or_attr(int input, const std::string &attr) const;
  // dims_value / ints_value of an input that the op cannot do without; throws
  // ValueRequired (see known_values.h) naming `what` when not known.
  std::vector<Dim> required_dims(int i, const std::string &what) const;
  std::vector<int64_t> required_ints(int i, const std::string &what) const;
  // The elements of a constant input of any dtype (float scales, roi); throws
  // ValueRequired like required_ints when not a constant.
  std::vector<double> required_floats(int i, const std::string &what) const;

  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  bool has_output(int i) const { return i < num_outputs() && node_.outputs[i] >= 0; }
  void set_output(int i, DType t, Shape s);
  void set_dims_value(int i, std::vector<Dim> v);  // output elements as dims (int64 outputs)
  void set_constant(int i, TensorData t);           // folded output

  template <typename... Args>
  [[noreturn]] void fail(const Args &...args) const {
    ::disco::fail(where(), ": ", args...);
  }
  // a == b, recorded in the store with a run-time check naming this node.
  void require_equal(const Dim &a, const Dim &b, const std::string &what);
  // The numpy-style broadcast of two dims / shapes, with the checks it needs.
  Dim broadcast_dim(const Dim &a, const Dim &b, const std::string &what);
  Shape broadcast(const Shape &a, const Shape &b);

 private:
  Graph &g_;
  const Node &node_;
  ShapeStore &store_;
  AttrReader attrs_;
};

// Runs inference over the whole graph in order. Throws naming the node for
// unknown ops, unsupported opsets and shape errors.
void infer_shapes(Graph &g, ShapeStore &store);

}  // namespace disco
