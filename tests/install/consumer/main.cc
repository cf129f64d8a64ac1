// Runs the AOT library `layer` (CMakeLists.txt) on each INPUT.npy and compares
// its output with EXPECTED.npy (PyTorch's), within rtol 1e-4, atol 1e-5; then
// gives it an input of the wrong width and expects an error naming the dim.
// Reads the .npy files with disco::runtime's reader. Exits 1 on any mismatch.
//   app INPUT.npy EXPECTED.npy [INPUT.npy EXPECTED.npy ...]
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "layer.h"
#include "runtime/npy.h"

namespace {

// A dense float32 halide_buffer_t over `data` with ONNX dims `shape` (Halide's dim[0] is the last).
halide_buffer_t make_buffer(std::vector<halide_dimension_t> &dims, const std::vector<int64_t> &shape, float *data) {
  dims.assign(shape.size(), halide_dimension_t{});
  int32_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims[i] = {0, static_cast<int32_t>(shape[shape.size() - 1 - i]), stride, 0};
    stride *= dims[i].extent;
  }
  halide_buffer_t b{};
  b.host = reinterpret_cast<uint8_t *>(data);
  b.type = {halide_type_float, 32, 1};
  b.dimensions = static_cast<int32_t>(dims.size());
  b.dim = dims.data();
  return b;
}

bool check(const std::string &input_path, const std::string &expected_path) {
  const disco::TensorData input = disco::read_npy(input_path);
  const disco::TensorData expected = disco::read_npy(expected_path);
  if (input.dtype != disco::DType::F32 || expected.dtype != disco::DType::F32) {
    std::printf("%s: float32 files expected\n", input_path.c_str());
    return false;
  }
  std::vector<float> in_data(input.as<float>(), input.as<float>() + input.num_bytes() / sizeof(float));
  std::vector<halide_dimension_t> in_dims, out_dims;
  halide_buffer_t in = make_buffer(in_dims, input.shape, in_data.data());
  out_dims.assign(layer_output_ranks[0], halide_dimension_t{});
  halide_buffer_t out{};
  out.dim = out_dims.data();
  if (layer_output_shapes(&in, &out) != 0) {
    std::printf("%s: %s\n", input_path.c_str(), layer_last_error());
    return false;
  }
  std::vector<int64_t> out_shape;
  for (int i = out.dimensions - 1; i >= 0; --i) out_shape.push_back(out.dim[i].extent);
  if (out_shape != expected.shape) {
    std::printf("%s: output shape differs from the reference's\n", input_path.c_str());
    return false;
  }
  const size_t n = expected.num_bytes() / sizeof(float);
  std::vector<float> result(n);
  out = make_buffer(out_dims, out_shape, result.data());
  if (layer_run(&in, &out) != 0) {
    std::printf("%s: %s\n", input_path.c_str(), layer_last_error());
    return false;
  }
  const float *ref = expected.as<float>();
  double max_err = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const double err = std::fabs(double(result[i]) - ref[i]);
    if (!(err <= 1e-5 + 1e-4 * std::fabs(ref[i]))) ++bad;  // NaN counts as bad
    if (!(err <= max_err)) max_err = err;
  }
  std::printf("%s: max |error| %.3g against PyTorch, %zu of %zu outside tolerance\n", input_path.c_str(), max_err,
              bad, n);
  return bad == 0;
}

// A [1, 1, 767] input: the model fixes the last dim at 768, and says so.
bool check_bad_width() {
  std::vector<float> data(767, 0.5f), result(768);
  std::vector<halide_dimension_t> in_dims, out_dims;
  halide_buffer_t in = make_buffer(in_dims, {1, 1, 767}, data.data());
  halide_buffer_t out = make_buffer(out_dims, {1, 1, 768}, result.data());
  const int rc = layer_run(&in, &out);
  const std::string message = layer_last_error();
  std::printf("[1, 1, 767]: rc %d, '%s'\n", rc, message.c_str());
  return rc != 0 && message.find("dim 2 is 767") != std::string::npos;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3 || argc % 2 != 1) {
    std::fprintf(stderr, "usage: %s INPUT.npy EXPECTED.npy [INPUT.npy EXPECTED.npy ...]\n", argv[0]);
    return 2;
  }
  bool ok = true;
  try {
    for (int i = 1; i + 1 < argc; i += 2) ok = check(argv[i], argv[i + 1]) && ok;
  } catch (const std::exception &e) {  // disco::Error from the .npy reader
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  ok = check_bad_width() && ok;
  std::printf(ok ? "all checks pass\n" : "some checks FAIL\n");
  return ok ? 0 : 1;
}
