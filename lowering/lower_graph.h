// Lowers a set of nodes (one kernel's worth) to Halide Funcs. Values produced
// outside the set become ImageParams; constants become embedded Buffers; shape
// values folded at compile time become Funcs over the symbol parameters.
#pragma once
#include <map>
#include <vector>

#include "lowering/lower_context.h"

namespace disco {

struct LoweredKernel {
  std::vector<int> input_values;  // graph value ids passed in as buffers, in ABI order
  std::vector<Halide::ImageParam> input_params;
  std::vector<int> output_values;
  std::vector<Halide::Func> outputs;
  std::vector<Stage> stages;       // Funcs the lowerings asked to materialize
  std::vector<Dim> maybe_broadcast;  // dims read through select(dim == 1, ...), canonical, no repeats
  std::map<int, HTensor> tensors;  // every value the kernel defines or reads
  std::map<int, int> node_of_value;
  SymbolParams syms;
  // The compile-time values the lowerings read, node by node (NodeContext::record_reads).
  std::string value_notes;
};

// `nodes` are node indices in topological order; `outputs` are value ids.
// With `constants_as_inputs`, constants become input buffers like any value
// from outside (the plan stores them once); otherwise they are embedded in
// the pipeline. Ahead-of-time kernels take them as inputs: Halide 14 assumes
// an embedded buffer is aligned to the vector width, and does not align it
// that far in the object file for AVX-512. `f32_lanes` is the target's
// float32 vector width (LowerContext::f32_lanes).
LoweredKernel lower_nodes(const Graph &g, const ShapeStore &store, const std::vector<int> &nodes,
                          const std::vector<int> &outputs, bool constants_as_inputs = false, int f32_lanes = 8);

}  // namespace disco
