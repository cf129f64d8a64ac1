// The fallback duties' defaults: only the host backend, last in every list,
// writes copies and links kernel libraries; asking another backend is a bug in
// the driver, reported as such.
#include "targets/backend.h"

#include "frontend/errors.h"

namespace disco {

void Backend::compile_output_copy(int vid, PlanBuilder &) const {
  fail("internal: backend '", name(), "' cannot copy value ", vid, " into a graph output (only the fallback can)");
}

void Backend::write_runtime_object(const std::string &target, const std::string &) const {
  fail("internal: backend '", name(), "' has no code generator runtime for '", target, "'");
}

void Backend::link_kernel_library(const std::vector<std::string> &, const std::string &path) const {
  fail("internal: backend '", name(), "' cannot link '", path, "'");
}

}  // namespace disco
