// Binds shape symbols to values from the actual input shapes, then verifies
// every run-time check, before anything is allocated or run. Errors name the
// input, the dim and the relation that failed.
#pragma once
#include <string>
#include <vector>

#include "frontend/dim.h"
#include "frontend/dtype.h"
#include "runtime/runtime_check.h"
#include "runtime/symbol_slots.h"

namespace disco {

struct InputSpec {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;  // as declared: each dim a constant or a bare symbol
};

// The declared inputs and the checks, compiled over a symbol table once (when
// a plan is loaded), so that binding a run's shapes looks no name up.
class ShapeBinder {
 public:
  ShapeBinder() = default;
  ShapeBinder(std::vector<InputSpec> inputs, std::vector<RuntimeCheck> checks, SymbolTable &table);

  // `shapes[i]` is the actual shape of input i: unbinds every slot, binds
  // every input, then verifies the checks. Throws disco::Error on a mismatch.
  void bind(const std::vector<std::vector<int64_t>> &shapes, const std::vector<DType> &dtypes,
            BoundSymbols &values) const;
  // The same in parts, for callers that hold the shapes elsewhere:
  // values.clear(), every input in order, then verify_checks.
  void bind_input(size_t i, const std::vector<int64_t> &shape, DType dtype, BoundSymbols &values) const;
  // Checks with a symbol that only data gives (bound later by a host op) are
  // left to the kernels that use it.
  void verify_checks(const BoundSymbols &values) const;
  size_t num_inputs() const { return inputs_.size(); }

 private:
  // What an input's declared dim does with the actual extent.
  struct DeclaredDim {
    enum How { Fixed, Binds, Matches, NotASymbol } how;
    int64_t value = 0;           // Fixed: the extent; Binds, Matches: the symbol's slot
    size_t first_input = 0, first_dim = 0;  // Matches: where the symbol was bound
  };
  struct CompiledCheck {
    SlotDim a, b;
  };
  std::string where(size_t input, size_t dim) const;  // "input 'x' dim 1", for messages

  std::vector<InputSpec> inputs_;
  std::vector<std::vector<DeclaredDim>> dims_;
  std::vector<RuntimeCheck> checks_;
  std::vector<CompiledCheck> compiled_checks_;
};

// By name, for the compile side and tests: binds one set of shapes.
SymbolValues bind_symbols(const std::vector<InputSpec> &inputs, const std::vector<std::vector<int64_t>> &shapes,
                          const std::vector<DType> &dtypes, const std::vector<RuntimeCheck> &checks);

}  // namespace disco
