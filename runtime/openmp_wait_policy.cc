#include "runtime/openmp_wait_policy.h"

#include <cstring>

namespace disco {

bool environment_sets_openmp_wait_policy(char *const *envp) {
  for (char *const *e = envp; e && *e; ++e)
    if (std::strncmp(*e, "OMP_WAIT_POLICY=", 16) == 0 || std::strncmp(*e, "GOMP_SPINCOUNT=", 15) == 0) return true;
  return false;
}

}  // namespace disco
