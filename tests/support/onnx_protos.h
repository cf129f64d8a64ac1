// Small ONNX protobufs built by hand, for the tests that feed the importer or
// the CLI a model no exporter would write.
#pragma once
#include <cctype>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace disco::testing {

// A float input; each dim is a number, a symbol name, or "" (unknown).
inline onnx::ValueInfoProto *add_input(onnx::GraphProto *g, const std::string &name, std::vector<std::string> dims) {
  auto *in = g->add_input();
  in->set_name(name);
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto *shape = tt->mutable_shape();
  for (const auto &d : dims) {
    auto *dim = shape->add_dim();
    if (d.empty()) continue;  // unknown
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  return in;
}

inline onnx::NodeProto *add_node(onnx::GraphProto *g, const std::string &op, const std::vector<std::string> &inputs,
                                 const std::vector<std::string> &outputs, const std::string &name = "") {
  auto *n = g->add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  for (const auto &i : inputs) n->add_input(i);
  for (const auto &o : outputs) n->add_output(o);
  return n;
}

// An initializer's header; the caller fills in its data (typed, raw or external).
inline onnx::TensorProto *add_initializer(onnx::GraphProto *g, const std::string &name, int dtype,
                                          const std::vector<int64_t> &dims) {
  auto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

}  // namespace disco::testing
