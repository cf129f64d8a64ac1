// disco's executables (disco, disco-exec, benchmarks' harness) run OpenMP with
// the short spin that runtime/openmp_wait_policy.h recommends: each links
// tools/openmp_short_spin.cc (the CMake object library disco_openmp_short_spin)
// into itself, and that object sets it while the executable starts. The
// libraries never do: they leave their host process's environment alone.
// An explicit OMP_WAIT_POLICY or GOMP_SPINCOUNT in the environment wins.
#pragma once

namespace disco {

// Whether this executable's OpenMP was set to the short spin at start-up.
bool openmp_short_spin_by_default();

}  // namespace disco
