// The runtime half of a library backend (oneDNN, the example accelerator,
// ...): plan steps with `extern_call` set are run by an ExternKernel that the
// backend registered under that name. The executor makes one kernel object
// per step when it loads a plan, so a kernel can keep state across runs, such
// as primitives created for each run-time shape.
//
// Tensors are dense and row-major, in ONNX dim order. Kernels throw
// disco::Error (naming their step's label) on failure.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/dtype.h"
#include "runtime/plan.h"
#include "runtime/symbol_slots.h"

namespace disco {

struct ExternTensor {
  void *data = nullptr;  // null for an omitted optional input
  DType dtype = DType::Undefined;
  std::vector<int64_t> shape;
  bool constant = false;  // a weight: same data and address on every run
  int64_t num_elements() const;
};

struct ExternCall {
  const std::vector<ExternTensor> &inputs;
  const std::vector<ExternTensor> &outputs;  // allocated at their run-time shapes
  // Every symbol bound so far, by slot of the plan's table; find(name) looks
  // one up by name. Tests may pass a SymbolValues map.
  const BoundSymbols &symbols;
};

class ExternKernel {
 public:
  virtual ~ExternKernel() = default;
  virtual void run(const ExternCall &call) = 0;
  virtual void set_num_threads(int n) {}
};

// Made once per step when a plan is loaded; may reject bad params by throwing.
using ExternKernelFactory = std::function<std::unique_ptr<ExternKernel>(const PlanStep &step)>;

class ExternKernelRegistry {
 public:
  static ExternKernelRegistry &global();
  void add(const std::string &name, ExternKernelFactory factory);
  const ExternKernelFactory *find(const std::string &name) const;

 private:
  std::map<std::string, ExternKernelFactory> factories_;
};

// Typed access to a step's params, with errors that name the step and key.
std::string param_str(const PlanStep &step, const std::string &key);
int64_t param_int(const PlanStep &step, const std::string &key);
double param_float(const PlanStep &step, const std::string &key);
std::vector<int64_t> param_ints(const PlanStep &step, const std::string &key);
std::vector<std::string> param_list(const PlanStep &step, const std::string &key);  // comma-separated
bool has_param(const PlanStep &step, const std::string &key);
// An optional flag: false where the step has no such param, else whether its integer is not 0.
bool param_flag(const PlanStep &step, const std::string &key);
// An optional list of input or output positions of the step (e.g. "channels_last_inputs"): empty
// where the step has no such param; each must not be negative. Not checked against the step's
// inputs: an AOT library makes its steps from their params alone (runtime/extern_c_abi.cc).
std::vector<size_t> param_positions(const PlanStep &step, const std::string &key);
std::string join_ints(const std::vector<int64_t> &v);

}  // namespace disco
