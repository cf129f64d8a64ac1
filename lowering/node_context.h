// What shape inference and lowering both see of one node: the node, its op's
// registry entry, its attributes, its inputs' dtypes, shapes and the values
// known at compile time, and the shape store. InferContext and LowerContext
// add what each phase writes.
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "frontend/attributes.h"
#include "frontend/errors.h"
#include "frontend/graph.h"
#include "lowering/op_registry.h"
#include "lowering/shape_store.h"

namespace disco {

class NodeContext {
 public:
  NodeContext(const Graph &g, const Node &node, const ShapeStore &store, const OpDef &def);

  const Node &node() const { return node_; }
  const OpDef &def() const { return def_; }
  // The op's own expression (op_math.h) for a family's shared infer and lower.
  template <class Math>
  const Math &math() const {
    if (const Math *m = std::get_if<Math>(&def_.math)) return *m;
    fail("op registered without the expression its family needs");
  }
  const AttrReader &attrs() const { return attrs_; }
  int opset() const { return node_.opset; }
  std::string where() const { return node_.where(); }
  const ShapeStore &store() const { return store_; }

  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && node_.inputs[i] >= 0; }
  const Value &input(int i) const;  // throws naming the node if missing
  DType dtype(int i) const { return input(i).dtype; }
  const Shape &shape(int i) const;
  int rank(int i) const { return static_cast<int>(shape(i).size()); }
  const TensorData *constant(int i) const;
  // The elements of an integer input when known at compile time: constants, or
  // shape values folded to dims (lowering/known_values.h).
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
  // Throws ValueRequired for input i, known or not: for an op that can use
  // its dims only together with other inputs it does not have.
  [[noreturn]] void require_value(int i, const std::string &what) const;
  // The elements of a constant input of any dtype; nullopt when not a constant.
  std::optional<std::vector<double>> floats_value(int i) const;

  // Lowering only: every compile-time value the accessors above hand out is
  // noted here ("in1=<digest>"), since it is baked into the kernel's code. Two
  // kernels built from the same ops over the same shapes, with the same notes,
  // are the same kernel (targets/host/kernel_key.h).
  void record_reads(std::string *notes) { notes_ = notes; }

  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  bool has_output(int i) const { return i < num_outputs() && node_.outputs[i] >= 0; }

  template <typename... Args>
  [[noreturn]] void fail(const Args &...args) const {
    ::disco::fail(where(), ": ", args...);
  }

 protected:
  const Graph &graph_;
  const Node &node_;
  const ShapeStore &store_;
  const OpDef &def_;
  AttrReader attrs_;
  std::string *notes_ = nullptr;
  // Notes input i's known elements (constant bytes, or shape-value dims) as read.
  void note_input(int i) const;
  void note(const std::string &what) const {
    if (notes_) *notes_ += what + ";";
  }
};

}  // namespace disco
