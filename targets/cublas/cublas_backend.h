// The cuBLAS backend (opt-in: `--targets cublas,host`): float32 MatMul and
// Gemm with a bias Add and a Relu after them (targets/cublas/cublas_rules.h)
// become one plan step each, "cublas.matmul", which the glue in
// cublas_kernels.cc runs on the GPU: operands copied to the device (weights
// once, then kept there), cublasSgemm or cublasSgemmStridedBatched, the
// result copied back and the epilogue applied on the host.
//
// Compiling needs no CUDA at all. Running loads the driver and cuBLAS at the
// first call (targets/cublas/cuda_api.h); without them, or without a device,
// the run fails with a disco::Error naming the step and what is missing.
#pragma once
#include <memory>

#include "targets/backend.h"

namespace disco {

std::unique_ptr<Backend> make_cublas_backend();
// Registers "cublas.matmul" with ExternKernelRegistry::global().
void install_cublas_runtime();

}  // namespace disco
