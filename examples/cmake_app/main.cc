// Runs the ahead-of-time compiled model `layer` (one input, one output; see
// CMakeLists.txt) at the shape of each INPUT.npy, compares its output with
// EXPECTED.npy and prints the largest error. Exits 1 on any mismatch.
//   app INPUT.npy EXPECTED.npy [INPUT.npy EXPECTED.npy ...]
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "layer.h"
#include "npy_file.h"

static_assert(LAYER_NUM_INPUTS == 1 && LAYER_NUM_OUTPUTS == 1, "the example runs one-input, one-output models");

namespace {

// A halide_buffer_t over `data` with ONNX dims `shape`, innermost first as Halide wants.
halide_buffer_t make_buffer(std::vector<halide_dimension_t> &dims, const std::vector<int64_t> &shape,
                            float *data) {
  dims.assign(shape.size(), halide_dimension_t{});
  int32_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    halide_dimension_t &d = dims[i];
    d.min = 0;
    d.extent = static_cast<int32_t>(shape[shape.size() - 1 - i]);
    d.stride = stride;
    stride *= d.extent;
  }
  halide_buffer_t b{};
  b.host = reinterpret_cast<uint8_t *>(data);
  b.type = {halide_type_float, 32, 1};
  b.dimensions = static_cast<int32_t>(dims.size());
  b.dim = dims.data();
  return b;
}

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

// Runs the model on one input; returns true when the output matches `expected`
// within rtol 1e-4, atol 1e-5 (the tolerance disco's own model tests use).
bool check(const std::string &input_path, const std::string &expected_path) {
  NpyArray input = read_npy_f32(input_path);
  NpyArray expected = read_npy_f32(expected_path);

  std::vector<halide_dimension_t> in_dims, out_dims;
  halide_buffer_t in = make_buffer(in_dims, input.shape, input.data.data());
  // The output's shape depends on the input's: the model says what it is.
  out_dims.assign(layer_output_ranks[0], halide_dimension_t{});
  halide_buffer_t out{};
  out.dim = out_dims.data();
  if (layer_output_shapes(&in, &out) != 0) {
    std::printf("%s: %s\n", shape_text(input.shape).c_str(), layer_last_error());
    return false;
  }
  std::vector<int64_t> out_shape;
  for (int i = out.dimensions - 1; i >= 0; --i) out_shape.push_back(out.dim[i].extent);
  if (out_shape != expected.shape) {
    std::printf("%s: output shape %s, expected %s\n", shape_text(input.shape).c_str(),
                shape_text(out_shape).c_str(), shape_text(expected.shape).c_str());
    return false;
  }
  std::vector<float> result(expected.data.size());
  out = make_buffer(out_dims, out_shape, result.data());
  if (layer_run(&in, &out) != 0) {
    std::printf("%s: %s\n", shape_text(input.shape).c_str(), layer_last_error());
    return false;
  }

  double max_err = 0;
  size_t bad = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    double err = std::fabs(double(result[i]) - expected.data[i]);
    if (!(err <= 1e-5 + 1e-4 * std::fabs(expected.data[i]))) ++bad;  // NaN counts as bad
    if (!(err <= max_err)) max_err = err;
  }
  bool ok = bad == 0;
  std::printf("%s -> %s: max |error| %.3g against the reference, %zu of %zu outside tolerance: %s\n",
              shape_text(input.shape).c_str(), shape_text(out_shape).c_str(), max_err, bad, result.size(), ok ? "ok" : "MISMATCH");
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3 || argc % 2 != 1) {
    std::fprintf(stderr, "usage: %s INPUT.npy EXPECTED.npy [INPUT.npy EXPECTED.npy ...]\n", argv[0]);
    return 2;
  }
  bool all_ok = true;
  try {
    for (int i = 1; i + 1 < argc; i += 2) all_ok = check(argv[i], argv[i + 1]) && all_ok;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::printf(all_ok ? "all outputs match\n" : "some outputs do NOT match\n");
  return all_ok ? 0 : 1;
}
