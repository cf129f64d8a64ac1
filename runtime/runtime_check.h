// A run-time check: a relation between two dims that the compiler assumed and
// the runtime verifies before a plan runs (runtime/shape_binder.h). The
// compiler's constraint store (lowering/shape_store.h) records them; plans
// carry them. Each carries the message a user sees when an input breaks it.
#pragma once
#include <cstdint>
#include <string>

#include "frontend/dim.h"

namespace disco {

struct RuntimeCheck {
  enum Kind { Equal, Broadcastable, Divisible, AtLeast } kind;
  Dim a, b;             // Equal: a == b; Broadcastable: a == b || a == 1 || b == 1;
                        // Divisible: a % b == 0; AtLeast: a >= b
  std::string message;  // names the node or input, the dims and the relation
  bool holds(const SymbolValues &v) const;
  std::string describe(const SymbolValues &v) const;  // message plus the values seen
  // The relation on values, for any evaluation of a and b.
  static bool relation_holds(Kind kind, int64_t a, int64_t b);
};

}  // namespace disco
