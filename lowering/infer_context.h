// What one op's shape inference sees: its node, inputs (dtype, shape, and the
// values known at compile time), the attribute parser and the shape store.
// Inference sets each output's dtype and shape and, where it can, folds the
// output's value (constants, or shape values as dims) for the ops downstream.
#pragma once
#include <vector>

#include "lowering/node_context.h"

namespace disco {

class InferContext : public NodeContext {
 public:
  InferContext(Graph &g, int node_index, ShapeStore &store, const OpDef &def);

  using NodeContext::store;
  ShapeStore &store() { return writable_store_; }

  void set_output(int i, DType t, Shape s);
  void set_dims_value(int i, std::vector<Dim> v);  // output elements as dims (int64 outputs)
  void set_constant(int i, TensorData t);           // folded output

  // a == b, recorded in the store with a run-time check naming this node.
  void require_equal(const Dim &a, const Dim &b, const std::string &what);
  // The numpy-style broadcast of two dims / shapes, with the checks it needs.
  // `what` names the dims and their extents ("dim 2 (3 vs 4) of [...] and [...]").
  Dim broadcast_dim(const Dim &a, const Dim &b, const std::string &what);
  Shape broadcast(const Shape &a, const Shape &b);

 private:
  Graph &writable_graph_;
  ShapeStore &writable_store_;
};

// Runs inference over the whole graph in order. Throws naming the node for
// unknown ops, unsupported opsets and shape errors.
void infer_shapes(Graph &g, ShapeStore &store);

}  // namespace disco
