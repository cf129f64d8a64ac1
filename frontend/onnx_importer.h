// Reads an ONNX model (file or bytes) into a disco Graph: initializers,
// Constant nodes, external data files next to the model, opset imports per
// domain. dim_param names become shared symbols; unknown dims become fresh
// symbols named after their input ("x_dim2").
#pragma once
#include <string>

#include "frontend/graph.h"

namespace disco {

Graph load_onnx_file(const std::string &path);
// `base_dir` is where external data files are looked up.
Graph load_onnx_bytes(const std::string &bytes, const std::string &base_dir, const std::string &what);
// A serialized TensorProto, as in the ONNX backend tests' input_0.pb files.
TensorData load_onnx_tensor_file(const std::string &path);

}  // namespace disco
