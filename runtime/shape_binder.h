// Binds shape symbols to values from the actual input shapes, then verifies
// every run-time check, before anything is allocated or run. Errors name the
// input, the dim and the relation that failed.
#pragma once
#include <string>
#include <vector>

#include "frontend/dim.h"
#include "frontend/dtype.h"
#include "runtime/runtime_check.h"

namespace disco {

struct InputSpec {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;  // as declared: each dim a constant or a bare symbol
};

// `shapes[i]` is the actual shape of input i. Throws disco::Error on mismatch.
SymbolValues bind_symbols(const std::vector<InputSpec> &inputs, const std::vector<std::vector<int64_t>> &shapes,
                          const std::vector<DType> &dtypes, const std::vector<RuntimeCheck> &checks);

}  // namespace disco
