// A small writer of ONNX graphs with subgraphs (If, Loop and Scan bodies), for
// the tests that build control-flow models by hand: names in, names out.
#pragma once
#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/onnx_importer.h"
#include "frontend/tensor_data.h"
#include "onnx/onnx_pb.h"

namespace disco::testing {

struct GraphWriter {
  onnx::GraphProto *g;

  // A node; unnamed ones are called OP_K_OUT0 (K: the node's position).
  onnx::NodeProto *node(const std::string &op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string &name = "") {
    auto *n = g->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(g->node_size()) + "_" + outs.at(0) : name);
    for (auto &i : ins) n->add_input(i);
    for (auto &o : outs) n->add_output(o);
    return n;
  }
  // Dims: a number, or -1 for the symbol n.
  void input(const std::string &name, int elem, std::vector<int64_t> dims) {
    auto *vi = g->add_input();
    vi->set_name(name);
    auto *tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto *shape = tt->mutable_shape();
    for (int64_t d : dims)
      if (d < 0)
        shape->add_dim()->set_dim_param("n");
      else
        shape->add_dim()->set_dim_value(d);
  }
  // Dims: a number ("3"), or a symbol by name ("n").
  void symbolic_input(const std::string &name, int elem, const std::vector<std::string> &dims) {
    auto *vi = g->add_input();
    vi->set_name(name);
    auto *tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto *shape = tt->mutable_shape();
    for (const auto &d : dims)
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
        shape->add_dim()->set_dim_value(std::stoll(d));
      else
        shape->add_dim()->set_dim_param(d);
  }
  // A body input with no type (the spec lets Loop and Scan bodies leave it out).
  void untyped_input(const std::string &name) { g->add_input()->set_name(name); }
  // An output; elem 0 (UNDEFINED) leaves its type to inference.
  void output(const std::string &name, int elem = 0) {
    auto *vi = g->add_output();
    vi->set_name(name);
    if (elem != 0) vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  void tensor(const std::string &name, const TensorData &t) { fill(g->add_initializer(), name, t); }
  void scalar(const std::string &name, float v) { tensor(name, TensorData::scalar_f32(v)); }
  void int_scalar(const std::string &name, int64_t v) { tensor(name, TensorData::from_int64({v}, {})); }
  void bool_scalar(const std::string &name, bool v) {
    TensorData t(DType::Bool, {});
    t.mutable_as<uint8_t>()[0] = v ? 1 : 0;
    tensor(name, t);
  }
  // A Constant node, as torch.onnx writes torch.empty((0,)).
  void constant(const std::string &name, const TensorData &t) {
    auto *a = node("Constant", {}, {name})->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    fill(a->mutable_t(), name, t);
  }

  static void fill(onnx::TensorProto *p, const std::string &name, const TensorData &t) {
    p->set_name(name);
    switch (t.dtype) {
      case DType::F32: p->set_data_type(onnx::TensorProto::FLOAT); break;
      case DType::I64: p->set_data_type(onnx::TensorProto::INT64); break;
      case DType::Bool: p->set_data_type(onnx::TensorProto::BOOL); break;
      default: throw std::invalid_argument("GraphWriter: tensor '" + name + "' is not float32, int64 or bool");
    }
    for (int64_t d : t.shape) p->add_dims(d);
    p->set_raw_data(std::string(reinterpret_cast<const char *>(t.data()), t.num_bytes()));
  }
};

inline void int_attr(onnx::NodeProto *n, const std::string &name, int64_t v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// A graph attribute (a branch or a body) of node n, to be written into.
inline GraphWriter graph_attr(onnx::NodeProto *n, const std::string &name) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(n->name() + "_" + name);
  return GraphWriter{a->mutable_g()};
}

// A model of one opset of the default domain; graph() imports it.
struct ModelWriter {
  onnx::ModelProto m;
  GraphWriter main;
  std::string name;
  ModelWriter(const std::string &model_name, int64_t opset) : main{m.mutable_graph()}, name(model_name) {
    m.set_ir_version(8);
    m.mutable_graph()->set_name(model_name);
    m.add_opset_import()->set_version(opset);
  }
  Graph graph() const { return load_onnx_bytes(m.SerializeAsString(), ".", name + " test model"); }
};

}  // namespace disco::testing
