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
  std::map<int, HTensor> tensors;  // every value the kernel defines or reads
  std::map<int, int> node_of_value;
  SymbolParams syms;
};

// `nodes` are node indices in topological order; `outputs` are value ids.
LoweredKernel lower_nodes(const Graph &g, const ShapeStore &store, const std::vector<int> &nodes,
                          const std::vector<int> &outputs);

}  // namespace disco
