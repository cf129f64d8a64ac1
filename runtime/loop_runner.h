// Runs a disco::Loop step (lowering/ops/run_time_loop.h): a Loop whose trip
// count or condition is known only at run time. Its body was compiled into a
// plan of its own, loop<K>.plan.txt beside the enclosing plan; the runner
// runs it once per iteration with an executor of its own, feeding the
// loop-carried values back in and stacking the scan outputs along a new first
// axis, whose extent (the trip count) binds a fresh symbol of the enclosing
// plan, as a host op's outputs do.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/tensor_data.h"
#include "runtime/plan.h"

namespace disco {

class Executor;

class LoopRunner {
 public:
  // `step`: the plan step (host_op "Loop", host_attrs "carried" and "body_plan"); `dir`: the plan's folder.
  LoopRunner(const PlanStep &step, const std::string &dir);
  ~LoopRunner();

  // Inputs: trip count (null: none), condition (null: none), carried..., outer values...
  // Outputs: the carried values' last values, then the scan outputs. With no
  // iteration, scan output k takes the shape `empty_scan(k)` gives (its first dim 0).
  std::vector<TensorData> run(const std::vector<const TensorData *> &inputs,
                              const std::function<std::vector<int64_t>(size_t)> &empty_scan);
  void set_num_threads(int n);

 private:
  std::string where_;  // "node 'Loop_3' (Loop)"
  size_t carried_ = 0;
  std::unique_ptr<Executor> body_;
};

}  // namespace disco
