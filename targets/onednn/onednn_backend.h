// The oneDNN backend: MatMul, Gemm and Conv with their fused epilogues
// (targets/onednn/onednn_rules.h) become calls into oneDNN, one plan step per
// unit, run by the glue in targets/onednn/onednn_kernels.h.
#pragma once
#include <memory>

#include "targets/backend.h"

namespace disco {

std::unique_ptr<Backend> make_onednn_backend();

}  // namespace disco
