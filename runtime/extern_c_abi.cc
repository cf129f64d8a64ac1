#include "runtime/extern_c_abi.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/extern_kernel.h"

namespace {

void set_error(char *error, size_t size, const std::string &message) {
  if (!error || size == 0) return;
  const size_t n = std::min(message.size(), size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

disco::ExternTensor tensor_of(const disco_extern_tensor &t) {
  disco::ExternTensor e;
  e.data = t.data;
  e.dtype = static_cast<disco::DType>(t.dtype);
  e.shape.assign(t.shape, t.shape + t.rank);
  e.constant = t.constant != 0;
  return e;
}

}  // namespace

struct disco_extern_step {
  disco::PlanStep step;
  disco::ExternKernelFactory make;
  std::mutex mu;
  // The driver passes the same symbol names, in the same order, on every run:
  // their table is made once, and a run only sets the values by slot. A table
  // made per run (a map of strings and a shared_ptr) cost microseconds, the
  // AOT side's whole gap to the JIT on mlp 1x256.
  std::once_flag table_once;
  std::shared_ptr<const disco::SymbolTable> table;  // slot i: names_seen[i]
  const char *const *names_seen = nullptr;
  std::vector<std::unique_ptr<disco::ExternKernel>> idle;  // kernel objects no run holds
  std::vector<int> idle_threads;                           // the thread count each was last set to

  // A kernel object for one run: an idle one, else a new one.
  std::unique_ptr<disco::ExternKernel> take(int *threads) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        auto k = std::move(idle.back());
        *threads = idle_threads.back();
        idle.pop_back();
        idle_threads.pop_back();
        return k;
      }
    }
    *threads = 0;
    return make(step);
  }
  void give_back(std::unique_ptr<disco::ExternKernel> k, int threads) {
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(std::move(k));
    idle_threads.push_back(threads);
  }
};

extern "C" disco_extern_step *disco_extern_create(const char *call, const char *label, int n_params,
                                                  const char *const *keys, const char *const *values, char *error,
                                                  size_t error_size) {
  try {
    const disco::ExternKernelFactory *make = disco::ExternKernelRegistry::global().find(call);
    if (!make) {
      set_error(error, error_size, std::string("step ") + label + " calls '" + call +
                                       "', which no backend glue linked into this program provides");
      return nullptr;
    }
    auto s = std::make_unique<disco_extern_step>();
    s->step.extern_call = call;
    s->step.label = label;
    for (int i = 0; i < n_params; ++i) s->step.params[keys[i]] = values[i];
    s->make = *make;
    // One kernel object now: bad params fail here, at the first run's setup, not midway.
    int threads = 0;
    auto first = s->take(&threads);
    s->give_back(std::move(first), threads);
    return s.release();
  } catch (const std::exception &e) {
    set_error(error, error_size, e.what());
  } catch (...) {
    set_error(error, error_size, std::string("step ") + label + ": unknown error");
  }
  return nullptr;
}

extern "C" int disco_extern_run(disco_extern_step *step, int n_inputs, const disco_extern_tensor *inputs,
                                int n_outputs, const disco_extern_tensor *outputs, int n_symbols,
                                const char *const *symbol_names, const int64_t *symbol_values, int num_threads,
                                char *error, size_t error_size) {
  try {
    std::vector<disco::ExternTensor> ins, outs;
    for (int i = 0; i < n_inputs; ++i) ins.push_back(tensor_of(inputs[i]));
    for (int i = 0; i < n_outputs; ++i) outs.push_back(tensor_of(outputs[i]));
    std::call_once(step->table_once, [&] {
      auto t = std::make_shared<disco::SymbolTable>();
      for (int i = 0; i < n_symbols; ++i) t->slot(symbol_names[i]);
      step->table = std::move(t);
      step->names_seen = symbol_names;
    });
    disco::BoundSymbols symbols;
    if (symbol_names == step->names_seen && step->table->size() == n_symbols) {
      symbols = disco::BoundSymbols(step->table);
      for (int i = 0; i < n_symbols; ++i) symbols.set(i, symbol_values[i]);
    } else {  // another names array than the first run's (or a name repeated): by name
      disco::SymbolValues values;
      for (int i = 0; i < n_symbols; ++i) values[symbol_names[i]] = symbol_values[i];
      symbols = disco::BoundSymbols(values);
    }
    int threads = 0;
    auto kernel = step->take(&threads);
    if (num_threads > 0 && num_threads != threads) {
      kernel->set_num_threads(num_threads);
      threads = num_threads;
    }
    kernel->run({ins, outs, symbols});  // a kernel that throws is dropped: its state is unknown
    step->give_back(std::move(kernel), threads);
    return 0;
  } catch (const std::exception &e) {
    set_error(error, error_size, e.what());
  } catch (...) {
    set_error(error, error_size, "step " + step->step.label + ": unknown error");
  }
  return -1;
}

extern "C" void disco_extern_destroy(disco_extern_step *step) { delete step; }
