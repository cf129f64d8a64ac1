#include "runtime/runtime_check.h"

#include <sstream>

namespace disco {

bool RuntimeCheck::relation_holds(Kind kind, int64_t x, int64_t y) {
  switch (kind) {
    case Equal: return x == y;
    case Broadcastable: return x == y || x == 1 || y == 1;
    case Divisible: return y != 0 && x % y == 0;
    case AtLeast: return x >= y;
  }
  return false;
}

bool RuntimeCheck::holds(const SymbolValues &v) const { return relation_holds(kind, a.eval(v), b.eval(v)); }

std::string RuntimeCheck::describe(const SymbolValues &v) const {
  std::ostringstream os;
  os << message << " (got " << a.str() << " = " << a.eval(v);
  if (!b.is_const()) os << ", " << b.str() << " = " << b.eval(v);
  os << ")";
  return os.str();
}

}  // namespace disco
