// The oneDNN backend: MatMul, Gemm and Conv with their fused epilogues, and
// poolings (targets/onednn/onednn_rules.h), become calls into oneDNN, one
// plan step per unit, run by the glue in targets/onednn/onednn_kernels.h.
// Values that only its convolution and pooling steps read are handed over
// channels last (targets/onednn/onednn_layout.h).
#pragma once
#include <memory>

#include "targets/backend.h"

namespace disco {

std::unique_ptr<Backend> make_onednn_backend();

}  // namespace disco
