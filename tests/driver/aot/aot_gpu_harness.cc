// Runs a CUDA AOT library (linked alone: its .a, libc, pthread, dl) on one
// reference input. Built per model and capability with DISCO_AOT_NAME and
// DISCO_AOT_HEADER.
//
//   aot_gpu_harness IN REF
//
// Without a usable GPU (no libcuda, no device), NAME_run must return non-zero
// with a message that names CUDA, and the process must not abort. With one,
// the output must match PyTorch's reference (rtol 1e-3, atol 1e-5).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include DISCO_AOT_HEADER
#include "npy_lite.h"

#define DISCO_CAT2(a, b) a##b
#define DISCO_CAT(a, b) DISCO_CAT2(a, b)
#define FN(suffix) DISCO_CAT(DISCO_AOT_NAME, suffix)

namespace {

halide_buffer_t view(void *host, const std::vector<int64_t> &shape, std::vector<halide_dimension_t> &dims) {
  halide_buffer_t b{};
  dims.assign(shape.size(), halide_dimension_t{});
  int32_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims[i].extent = static_cast<int32_t>(shape[shape.size() - 1 - i]);
    dims[i].stride = stride;
    stride *= dims[i].extent;
  }
  b.host = static_cast<uint8_t *>(host);
  b.type.code = halide_type_float;
  b.type.bits = 32;
  b.type.lanes = 1;
  b.dimensions = static_cast<int32_t>(shape.size());
  b.dim = dims.data();
  return b;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.npy REF.npy\n", argv[0]);
    return 2;
  }
  npy_lite::Array in = npy_lite::read(argv[1]), ref = npy_lite::read(argv[2]);
  std::vector<halide_dimension_t> xd, yd(FN(_output_ranks)[0]);
  halide_buffer_t x = view(in.bytes.data(), in.shape, xd);
  halide_buffer_t y{};
  y.dim = yd.data();
  if (FN(_output_shapes)(&x, &y) != 0) {
    std::fprintf(stderr, "FAIL: output_shapes: %s\n", FN(_last_error)());
    return 1;
  }
  size_t n = 1;
  for (int i = 0; i < y.dimensions; ++i) n *= static_cast<size_t>(y.dim[i].extent);
  std::vector<float> out(n, NAN);
  y.host = reinterpret_cast<uint8_t *>(out.data());
  if (FN(_run)(&x, &y) != 0) {
    const std::string msg = FN(_last_error)();
    if (msg.find("CUDA") == std::string::npos && msg.find("cuda") == std::string::npos) {
      std::fprintf(stderr, "FAIL: the run failed with a message that does not name CUDA: %s\n", msg.c_str());
      return 1;
    }
    std::printf("no usable GPU: the run returned an error, as it must: %s\n", msg.c_str());
    // A second call fails the same way: no state is left half-initialized.
    if (FN(_run)(&x, &y) == 0 || std::string(FN(_last_error)()).empty()) {
      std::fprintf(stderr, "FAIL: a second run without a GPU did not fail with a message\n");
      return 1;
    }
    return 0;
  }
  const float *want = reinterpret_cast<const float *>(ref.bytes.data());
  if (ref.bytes.size() != n * sizeof(float)) {
    std::fprintf(stderr, "FAIL: %zu outputs, the reference has %zu\n", n, ref.bytes.size() / sizeof(float));
    return 1;
  }
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double err = std::fabs(out[i] - want[i]) / (1e-5 + 1e-3 * std::fabs(want[i]));
    worst = std::isnan(err) ? INFINITY : std::fmax(worst, err);
  }
  std::printf("ran on the GPU: worst error %.3g of the tolerance (rtol 1e-3, atol 1e-5)\n", worst);
  return worst <= 1.0 ? 0 : 1;
}
