// ONNX NonMaxSuppression on the host (a data-dependent op: its output's row
// count binds a symbol at run time; runtime/host_ops.h).
#pragma once
#include <vector>

#include "frontend/tensor_data.h"
#include "runtime/host_ops.h"

namespace disco {

// Inputs: boxes [B, N, 4], scores [B, C, N], then optional
// max_output_boxes_per_class, iou_threshold and score_threshold. Output
// [K, 3] int64 rows (batch, class, box), per (batch, class) in the order kept.
std::vector<TensorData> non_max_suppression(const std::vector<const TensorData *> &in, const HostAttrs &attrs);

}  // namespace disco
