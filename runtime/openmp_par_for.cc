#include "runtime/openmp_par_for.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

namespace disco {

namespace {

std::atomic<int> g_threads{0};

}  // namespace

void set_openmp_par_for_threads(int n) {
  g_threads.store(std::max(n, 0));
}

int openmp_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
  const int wanted = g_threads.load(std::memory_order_relaxed);
  const int team = std::min(size, wanted > 0 ? wanted : omp_get_num_procs());
  if (team <= 1 || omp_in_parallel()) {
    for (int i = min; i < min + size; ++i)
      if (int r = task(user_context, i, closure)) return r;
    return 0;
  }
  // Chunks of several tasks keep the shared counter cheap; several chunks per
  // thread let a thread that lost its core for a while be caught up.
  const int chunk = std::max(1, size / (team * 8));
  std::atomic<int> result{0};
#pragma omp parallel for num_threads(team) schedule(dynamic, chunk)
  for (int i = min; i < min + size; ++i) {
    if (result.load(std::memory_order_relaxed) != 0) continue;  // an error stops the rest, as in Halide's pool
    if (int r = task(user_context, i, closure)) result.store(r, std::memory_order_relaxed);
  }
  return result.load();
}

}  // namespace disco

// The same loop for AOT libraries whose glue runs on OpenMP (Backend::aot_glue's
// par_for): their kernel objects call this instead of halide_do_par_for.
extern "C" int disco_openmp_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
  return disco::openmp_do_par_for(user_context, task, min, size, closure);
}

extern "C" void disco_openmp_set_par_for_threads(int n) { disco::set_openmp_par_for_threads(n); }
