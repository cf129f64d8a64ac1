// A Halide kernel's structural key: the text of everything its code depends
// on, so that fusion groups with equal keys compile to the same function and
// can share one (issue #26: ConvNeXt's and ViT's blocks repeat the same
// kernels a dozen times, each compiled on its own before).
//
// The key holds the group's ops in order with their domains, opsets and
// attributes; how they are wired, with inputs named by their position in the
// kernel's argument list; every value's dtype and canonical symbolic shape,
// over the group's shape pattern where it has one (shape_pattern.h: p0, p1,
// ... for its symbolic extents, so that neither the extents nor the model's
// symbol names part kernels); the facts of `symbols`, every symbol whose facts
// the kernel may rely on (all of a pattern's parameters); the compile-time
// values the lowerings read (LoweredKernel::value_notes, from NodeContext);
// the schedule chosen; and the target. Value and node names are left out: they
// only name Funcs. Constants that are kernel inputs (weights, biases) are left
// out too, unless a lowering read their elements: they are arguments, not code.
#pragma once
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/lower_graph.h"
#include "lowering/shape_store.h"
#include "schedules/fusion.h"

namespace disco {

// `pattern`: `g` and `store` are a shape pattern's (its parameters named
// alike in every group), not the model's.
std::string kernel_key(const Graph &g, const ShapeStore &store, const FusionGroup &group, const LoweredKernel &k,
                       bool pattern, const std::vector<std::string> &symbols, const std::string &schedule,
                       const std::string &target);

}  // namespace disco
