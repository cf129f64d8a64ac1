// Shape values computed through float arithmetic, bound at run time
// (run_time_dims.cc).
#pragma once
#include <cstddef>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

// torchvision's detection transform resizes to floor([H, W] * scale) and pads
// to ceil(size / 32) * 32, both computed in float32 from the input's shape:
// Shape -> Cast(float) -> Div / Min / Mul -> Floor -> Cast(int64) -> Resize's
// sizes, Pad's pads. Dims are integers, so such a value is not folded, and an
// op that needs it as dims would make the session compile the input's values
// in (one compile per image). Instead, a Cast from float to an integer type
// whose input is computed from shape values and constants alone (no graph
// input's data, no host op's output) is followed by the host op
// disco::RunTimeDims: the Cast still computes the value at run time, in
// float32 as the exporter's framework does, and RunTimeDims gives each of its
// elements a fresh symbol that it binds from those values. Ops downstream see
// symbolic dims, so one compile serves every input shape.
//
// Called by shape inference right after node `index` is inferred; true when a
// RunTimeDims node was inserted at index + 1 (it takes over the Cast's output
// value, so the consumers are unchanged; the Cast writes a new value).
bool route_run_time_dims(Graph &g, size_t index, const ShapeStore &store);

// torch.onnx exports F.pad's pads, when they are tensors, through a reversal of
// [8] -> Reshape [4, 2] -> Slice(step -1) -> Transpose -> Reshape [8]; shape
// values are folded only up to rank 1, so the dims were lost at the [4, 2].
// For a View op (Reshape, Slice, Transpose, ...) whose data input is a small
// shape value of any rank and whose other inputs are constants, this folds its
// output as a shape value too: the op is run on the element numbers of its
// input, which says which input dim lands where. Called right after node
// `index` is inferred; true when it set the output's dims.
bool fold_view_of_dims(Graph &g, size_t index, const ShapeStore &store);

}  // namespace disco
