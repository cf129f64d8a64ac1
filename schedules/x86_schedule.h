// x86 schedules for one lowered kernel. Every schedule is valid for every
// shape: vector loops guard their tails, and nothing assumes an extent.
//
// - Outputs (group roots): the innermost dim is vectorized at the target's
//   natural width; the outer dims are fused and run in parallel.
// - Update definitions (MatMul/Conv accumulation): the same, with the
//   reduction loops kept inside the vectorized pure loop.
// - Stages the lowerings asked to materialize: computed at root, parallel.
#pragma once
#include "Halide.h"
#include "lowering/lower_graph.h"

namespace disco {

void schedule_x86(LoweredKernel &k, const Halide::Target &target);

}  // namespace disco
