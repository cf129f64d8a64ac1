// Runs a plan in a child process, `disco-exec --serve` (tools/disco_exec.cc),
// which links the runtime and no Halide. OpenCL plans need it: PoCL's LLVM 15
// crashes inside a process that has loaded Halide's LLVM 14. The Executor
// hands its calls over to a ChildExecutor by itself, so users see no
// difference. Tensors travel as .npy files in a private temporary folder,
// commands and replies as lines on the child's stdin and stdout.
#pragma once
#include <string>
#include <vector>

#include "frontend/tensor_data.h"
#include "runtime/executor.h"
#include "runtime/plan.h"

namespace disco {

// True when the plan's kernel library holds Halide's OpenCL runtime.
// DISCO_IN_PROCESS=1 runs every plan in the calling process.
bool plan_needs_child_process(const Plan &plan, const std::string &dir);

// The disco-exec binary: $DISCO_EXEC, else next to this program, else the build tree's.
std::string disco_exec_path();

class ChildExecutor {
 public:
  ChildExecutor(const Plan &plan, const std::string &dir);
  ~ChildExecutor();
  ChildExecutor(const ChildExecutor &) = delete;
  ChildExecutor &operator=(const ChildExecutor &) = delete;

  void run(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs, SymbolValues *symbols);
  void set_num_threads(int n);
  void set_profiling(bool on);
  std::vector<Executor::StepTime> profile();

 private:
  // Sends one command line; returns the reply's fields after "ok", or throws the child's error.
  std::vector<std::string> request(const std::string &line);
  void shut_down();  // closes the pipes, waits for the child, removes the folder

  std::string plan_name_, work_dir_;
  size_t num_outputs_ = 0;
  std::vector<DType> output_dtypes_;
  int pid_ = -1, to_child_ = -1, from_child_ = -1;
};

// The child's side: serves commands from stdin, replies on `reply_fd`, until stdin closes.
int serve_plan(const std::string &plan_file, const std::string &lib_dir, const std::string &work_dir, int reply_fd);

}  // namespace disco
