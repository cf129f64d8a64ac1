// OpenMP's threads sleep as soon as they wait, unless the environment says
// otherwise (OMP_WAIT_POLICY, GOMP_SPINCOUNT).
//
// libgomp's default is to spin for a while at every barrier and between
// parallel regions. On a quiet machine that saves a wake-up per region, but
// when other processes want the cores (even niced ones), a spinning or
// preempted team member holds every barrier of a run: with two threads,
// bert_layer at (1,128) took 84 ms instead of 10 ms next to a niced build,
// and mlp at (16,256) 16 ms instead of 0.1 ms. Sleeping waiters are woken
// promptly instead, and cost a few microseconds a region when it is quiet.
// Applies to executables that link disco's runtime statically.
#pragma once

namespace disco {

// Whether this process's OpenMP was set to passive waiting at start-up.
bool openmp_passive_by_default();

}  // namespace disco
