// XIR codegen when disco was configured without libxir: regions still run on
// the int8 reference executor; no .xmodel is written.
#include "frontend/errors.h"
#include "targets/vitis_ai/xir_emit.h"

namespace disco::vitis_ai {

bool xir_available() { return false; }
std::string validate_for_xir(const XirRegion &) { return "disco was built without libxir"; }
void emit_xmodel(const XirRegion &, const std::string &path) {
  fail("cannot write '", path, "': disco was built without libxir (install libxir-dev, then reconfigure)");
}

}  // namespace disco::vitis_ai
