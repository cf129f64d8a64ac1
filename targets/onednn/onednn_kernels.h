// The oneDNN backend's runtime glue: ExternKernels for the steps that
// targets/onednn/onednn_backend.h emits ("onednn.matmul", "onednn.conv",
// "onednn.pool"). It links oneDNN (with its OpenMP threading) and
// disco_runtime, not Halide, so a program that only runs plans can use it.
//
// Each step keeps the primitives it made for each distinct set of run-time
// input shapes, with constant weights reordered once into the layout the
// primitive prefers. The cache is bounded (kOnednnCacheCapacity per step,
// least recently used evicted first). Activations are used in place: plain
// row-major, except values that oneDNN steps hand each other channels last
// (onednn_layout.h), and strided views of MatMul operands (onednn_view.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/extern_kernel.h"

namespace disco {

constexpr size_t kOnednnCacheCapacity = 16;

// Registers the oneDNN kernels with ExternKernelRegistry::global(). Idempotent.
void install_onednn_runtime();

// What a oneDNN step shows besides running it, for tests and diagnostics.
class OnednnKernel : public ExternKernel {
 public:
  virtual size_t cached_shapes() const = 0;
  virtual int64_t primitives_created() const = 0;
  // The primitive and oneDNN's name for its implementation in the last run,
  // e.g. "inner_product brgemm:avx512_core".
  virtual std::string implementation() const = 0;
};

}  // namespace disco
