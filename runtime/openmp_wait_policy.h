// OpenMP's threads spin only briefly when they wait (GOMP_SPINCOUNT=30000,
// about a millisecond at most here), then sleep, unless the environment says
// otherwise (OMP_WAIT_POLICY, GOMP_SPINCOUNT).
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
// Applies to executables that link disco's runtime statically.
#pragma once

namespace disco {

// Whether this process's OpenMP was set to the short spin at start-up.
bool openmp_short_spin_by_default();

}  // namespace disco
