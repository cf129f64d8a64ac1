// Halide kernels' parallel loops on OpenMP's threads.
//
// Library backends (oneDNN) run on OpenMP. Halide's runtime would bring a
// second pool of threads; on a machine with few cores the two pools take the
// cores from each other at every hand-over (each waiting for the other's
// spinning or sleeping threads), which made two threads slower than one on
// small shapes. Installed into a kernel library, this makes every parallel
// loop of its kernels an OpenMP loop on the same team the libraries use.
#pragma once

#include "HalideRuntime.h"

namespace disco {

// The halide_do_par_for_t that kernel libraries get (see KernelLibrary).
int openmp_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure);

// Threads per parallel loop; 0 means OpenMP's default (all cores).
void set_openmp_par_for_threads(int n);

}  // namespace disco

// C names of the two for AOT libraries (driver/aot/): their kernel objects'
// halide_do_par_for is renamed to disco_openmp_do_par_for when the library's
// glue runs on OpenMP, so that the library's kernels share its threads, as
// the JIT's kernel libraries do, without changing Halide's hook for the rest
// of the program.
extern "C" int disco_openmp_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure);
extern "C" void disco_openmp_set_par_for_threads(int n);
