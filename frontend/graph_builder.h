// A small C++ API for building disco graphs without ONNX, used by tests,
// examples and users who generate models in code.
//
//   GraphBuilder b;
//   auto x = b.input("x", DType::F32, {Dim::symbol("batch"), 256});
//   auto w = b.constant("w", weights);
//   auto y = b.op("MatMul", {x, w});
//   b.output(b.op("Relu", {y}));
//   Graph g = b.build();
#pragma once
#include <string>
#include <vector>

#include "frontend/graph.h"

namespace disco {

Attribute attr_int(int64_t v);
Attribute attr_float(float v);
Attribute attr_string(const std::string &v);
Attribute attr_ints(std::vector<int64_t> v);
Attribute attr_floats(std::vector<float> v);
Attribute attr_tensor(TensorData t);

class GraphBuilder {
 public:
  explicit GraphBuilder(int opset = 17);

  std::string input(const std::string &name, DType t, Shape shape);
  std::string constant(const std::string &name, TensorData t);
  // Adds a node and returns the name of its first output ("" names an omitted input).
  std::string op(const std::string &op_type, const std::vector<std::string> &inputs, Attributes attrs = {});
  std::vector<std::string> op_n(const std::string &op_type, const std::vector<std::string> &inputs, int num_outputs,
                                Attributes attrs = {});
  void output(const std::string &name);
  Graph build();  // sorts the nodes; the builder is spent afterwards

 private:
  Graph g_;
  int counter_ = 0;
};

}  // namespace disco
