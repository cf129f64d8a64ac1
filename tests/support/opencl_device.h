// Whether the tests' OpenCL device, PoCL (a CPU OpenCL device that
// tools/setup.sh installs), is registered; tests that need it skip without it.
#pragma once
#include <cstdio>

namespace disco::testing {

inline bool has_pocl_device() {
  FILE *f = std::fopen("/etc/OpenCL/vendors/pocl.icd", "r");
  if (f) std::fclose(f);
  return f != nullptr;
}

}  // namespace disco::testing
