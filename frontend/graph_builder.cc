#include "frontend/graph_builder.h"

#include "frontend/errors.h"

namespace disco {

Attribute attr_int(int64_t v) {
  Attribute a;
  a.kind = Attribute::Int;
  a.i = v;
  return a;
}
Attribute attr_float(float v) {
  Attribute a;
  a.kind = Attribute::Float;
  a.f = v;
  return a;
}
Attribute attr_string(const std::string &v) {
  Attribute a;
  a.kind = Attribute::String;
  a.s = v;
  return a;
}
Attribute attr_ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Ints;
  a.ints = std::move(v);
  return a;
}
Attribute attr_floats(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Floats;
  a.floats = std::move(v);
  return a;
}
Attribute attr_tensor(TensorData t) {
  Attribute a;
  a.kind = Attribute::Tensor;
  a.t = std::move(t);
  return a;
}

GraphBuilder::GraphBuilder(int opset) { g_.opsets[""] = opset; }

std::string GraphBuilder::input(const std::string &name, DType t, Shape shape) {
  int id = g_.add_value(name, t);
  g_.value(id).shape = std::move(shape);
  g_.inputs.push_back(id);
  return name;
}

std::string GraphBuilder::constant(const std::string &name, TensorData t) {
  g_.add_constant(name, std::move(t));
  return name;
}

std::vector<std::string> GraphBuilder::op_n(const std::string &op_type, const std::vector<std::string> &inputs,
                                            int num_outputs, Attributes attrs) {
  Node n;
  n.op_type = op_type;
  n.name = op_type + "_" + std::to_string(counter_++);
  n.opset = g_.opsets[""];
  n.attrs = std::move(attrs);
  for (const auto &in : inputs) {
    if (in.empty()) {
      n.inputs.push_back(-1);
      continue;
    }
    int id = g_.find_value(in);
    DISCO_CHECK(id >= 0, n.where(), ": unknown input value '", in, "'");
    n.inputs.push_back(id);
  }
  std::vector<std::string> outs;
  for (int i = 0; i < num_outputs; ++i) {
    std::string name = n.name + (num_outputs > 1 ? "_out" + std::to_string(i) : "_out");
    n.outputs.push_back(g_.add_value(name));
    outs.push_back(name);
  }
  g_.nodes.push_back(std::move(n));
  return outs;
}

std::string GraphBuilder::op(const std::string &op_type, const std::vector<std::string> &inputs, Attributes attrs) {
  return op_n(op_type, inputs, 1, std::move(attrs))[0];
}

void GraphBuilder::output(const std::string &name) {
  int id = g_.find_value(name);
  DISCO_CHECK(id >= 0, "unknown output value '", name, "'");
  g_.outputs.push_back(id);
}

Graph GraphBuilder::build() {
  DISCO_CHECK(!g_.outputs.empty(), "graph has no outputs");
  g_.sort_nodes();
  return std::move(g_);
}

}  // namespace disco
