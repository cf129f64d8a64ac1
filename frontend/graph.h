// disco's graph IR: values with a dtype and a symbolic shape, nodes that read
// and write values, and constant data. Shapes are filled in by
// lowering/shape_inference; the importer only sets those of graph inputs.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/attributes.h"
#include "frontend/dim.h"
#include "frontend/dtype.h"
#include "frontend/tensor_data.h"

namespace disco {

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  std::optional<Shape> shape;                // set once inferred
  std::optional<TensorData> constant;        // initializers, Constant outputs, folded values
  std::optional<std::vector<Dim>> sym_value;  // elements of a small int tensor, as dims
  int producer = -1;                         // node index, -1 for inputs and constants
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  int opset = 0;       // the opset of `domain` that the model imports
  std::vector<int> inputs;  // value ids; -1 marks an omitted optional input
  std::vector<int> outputs;
  Attributes attrs;

  // "node 'MatMul_3' (MatMul)": the prefix of every error about this node.
  std::string where() const;
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<int> inputs, outputs;
  std::map<std::string, int> opsets;  // domain -> version

  int add_value(const std::string &name, DType t = DType::Undefined);
  // A value holding `t`, its dtype and shape t's.
  int add_constant(const std::string &name, TensorData t);
  int find_value(const std::string &name) const;  // -1 if none
  Value &value(int id) { return values.at(static_cast<size_t>(id)); }
  const Value &value(int id) const { return values.at(static_cast<size_t>(id)); }
  // Sorts nodes topologically; throws naming a node whose input is never produced.
  void sort_nodes();
};

// True when every output of the node is known at compile time (constants and
// shape values), so the node needs no kernel.
bool node_is_folded(const Graph &g, const Node &n);

}  // namespace disco
