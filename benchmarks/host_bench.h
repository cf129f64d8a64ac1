// What the one-node host benchmarks (elementwise_bench, datamove_bench) share:
// a graph compiled with the host backend alone, uncached (each run measures
// today's kernels), and two executors timed in alternating blocks, since this
// VM's speed drifts by 10-50% and only ratios taken side by side hold.
#pragma once
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "driver/compile_model.h"
#include "runtime/executor.h"

namespace disco::bench {

struct HostCompiled {
  CompiledModel model;
  std::unique_ptr<Executor> exec;
};

inline std::unique_ptr<HostCompiled> compile_host(const Graph &g, const std::string &name) {
  auto c = std::make_unique<HostCompiled>();
  CompileOptions o;
  o.use_cache = false;
  o.backends = {"host"};
  c->model = compile_graph(g, name, "", o);
  c->exec = std::make_unique<Executor>(c->model.plan, c->model.dir);
  return c;
}

// Median seconds per run of `a` on `in_a` and of `b` on `in_b`, alternating in
// `blocks` blocks of three runs each, every block after one untimed run (warm
// caches, and the other side's writes flushed).
inline std::pair<double, double> interleaved(Executor &a, const std::vector<TensorData> &in_a, Executor &b,
                                             const std::vector<TensorData> &in_b, int blocks) {
  using Clock = std::chrono::steady_clock;
  std::vector<TensorData> oa, ob;
  std::vector<double> ta, tb;
  for (int bl = 0; bl < blocks; ++bl)
    for (int side = 0; side < 2; ++side) {
      Executor &e = side == 0 ? a : b;
      const std::vector<TensorData> &in = side == 0 ? in_a : in_b;
      std::vector<TensorData> &o = side == 0 ? oa : ob;
      e.run(in, o);
      const auto t0 = Clock::now();
      const int reps = 3;
      for (int r = 0; r < reps; ++r) e.run(in, o);
      (side == 0 ? ta : tb).push_back(std::chrono::duration<double>(Clock::now() - t0).count() / reps);
    }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  return {ta[ta.size() / 2], tb[tb.size() / 2]};
}

}  // namespace disco::bench
