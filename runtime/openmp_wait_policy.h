// What disco recommends for OpenMP's waiting threads: spin only briefly
// (GOMP_SPINCOUNT=30000, about a millisecond at most here), then sleep.
//
// libgomp's default (300000) spins ten times longer at every barrier and
// between parallel regions: when other processes want the cores (even niced
// ones), a spinning team holds them, and with two threads bert_layer at
// (1,128) once took 84 ms instead of 10 ms next to a niced build. Sleeping at
// once (spin count 0) costs a wake-up per parallel region instead: measured
// side by side, two threads ran bert_layer (1,128) in 7-15 ms instead of
// 7 ms, mlp (16,256) in 0.10-0.25 ms instead of 0.08 ms and convnet
// (1,3,64,64) in 0.53 ms instead of 0.45 ms, with or without niced busy
// processes beside them. A short spin keeps the next region's wake-up free
// within a run and lets the threads sleep between runs.
//
// disco's libraries leave their host process's environment alone: a program
// that links them runs OpenMP as its environment says (libgomp reads it once,
// when it is loaded, so only the environment a program starts with counts).
// Set kRecommendedOpenmpSpin in that environment to follow the advice.
// disco's own executables (disco, disco-exec, the benchmark harness) set it
// for themselves at start-up: tools/openmp_short_spin.h.
#pragma once

namespace disco {

// The recommended setting, as an environment entry.
inline constexpr char kRecommendedOpenmpSpin[] = "GOMP_SPINCOUNT=30000";

// Whether `envp` (null-terminated "NAME=value" entries) already chooses
// OpenMP's wait policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT): an explicit
// choice wins over the recommendation.
bool environment_sets_openmp_wait_policy(char *const *envp);

}  // namespace disco
