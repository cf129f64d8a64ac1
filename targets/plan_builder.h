// Builds a Plan region by region. Backends call it from Backend::compile to
// get buffers for the values they read and write, and to append their steps.
// It keeps one buffer per value, stores each constant once (in the plan's
// constants file), hands out unique kernel names and compiles each distinct
// Halide kernel once, in parallel.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"
#include "runtime/plan.h"
#include "targets/compile_profile.h"
#include "targets/kernel_jobs.h"
#include "targets/kernel_store.h"

namespace disco {

class PlanBuilder {
 public:
  PlanBuilder(const Graph &g, const ShapeStore &store, std::string name, std::string dir, std::string target,
              std::function<void(const std::string &)> progress);

  const Graph &graph() const { return g_; }
  const ShapeStore &store() const { return store_; }
  const std::string &dir() const { return dir_; }
  const std::string &target() const { return target_; }  // the Halide target string for host code
  // A copy of graph(), made on first use, that a backend may change while it
  // compiles one group if it puts it back after (targets/host/shape_pattern.h):
  // one copy per compile, not one per group.
  Graph &scratch_graph();
  void progress(const std::string &line) const;
  // Called as each queued kernel finishes compiling (done, total).
  void set_kernel_progress(std::function<void(size_t, size_t)> f) { kernel_progress_ = std::move(f); }

  // The buffer holding a value for a reading step: a graph input, a value an
  // earlier step wrote, or a constant (stored once, whoever asks).
  int input_buffer(int vid);
  bool has_buffer(int vid) const { return buffer_of_.count(vid) != 0; }
  // A fresh buffer for a value the next step writes; the output buffer when
  // the value is a graph output. `rebind` false keeps readers on the old buffer
  // (a copy of a value into a second graph output).
  int output_buffer(int vid, bool rebind = true);
  // Allocates Temp buffer `buffer` with dim 1 rounded up to a multiple of
  // `multiple` (PlanBuffer::channel_multiple), for a layout that pads it.
  void pad_channels(int buffer, int64_t multiple);

  std::string next_kernel_name();
  // Kernels from and for other models: with a store, a new kernel is named
  // after its key (KernelStore::kernel_name) and add_kernel takes it from the
  // store when it is there; without one (AOT, no cache), kernels are named
  // NAME_k<i> after the model, so that several libraries link together.
  void use_kernel_store(const KernelStore *store) { kernel_store_ = store; }
  // The function name for a new kernel with this key.
  std::string new_kernel_name(const std::string &key);
  void add_step(PlanStep step);
  // Halide kernels by structural key (targets/host/kernel_key.h): the name of
  // the kernel queued for `key` already, if any, which a step can call instead
  // of compiling its own.
  std::optional<std::string> kernel_for(const std::string &key) const;
  // Queues a kernel's compile under its key; compile_kernels() runs it. With
  // a kernel store that holds the key, the stored object is used instead.
  void add_kernel(const std::string &key, KernelJob job);
  // Compiles every queued kernel, `workers` at a time (0: one per core), and
  // adds them to the kernel store. objects() lists every kernel's object, in
  // the order they were added.
  void compile_kernels(int workers);
  const std::vector<std::string> &objects() const { return objects_; }
  // The compile's phase times, which backends add their kernels' to.
  CompileProfile &profile() { return profile_; }
  // Graph outputs that no step has written yet (or written to another output already).
  std::vector<int> unwritten_outputs() const;

  // Checks that every output is written and writes the constants file into dir().
  Plan finish();

 private:
  const Graph &g_;
  const ShapeStore &store_;
  std::optional<Graph> scratch_;
  std::string dir_, target_;
  std::function<void(const std::string &)> progress_;
  std::function<void(size_t, size_t)> kernel_progress_;
  Plan plan_;
  std::map<int, int> buffer_of_;
  std::string constants_;
  std::vector<std::string> objects_;
  std::map<std::string, std::string> kernel_of_key_;
  std::vector<KernelJob> jobs_;
  std::vector<std::string> job_keys_;
  const KernelStore *kernel_store_ = nullptr;
  int kernels_ = 0;
  CompileProfile profile_;
};

// The compile() loop of a backend that emits one extern step per unit: for
// each unit, in the order given (an order in which every step reads only
// values already written), make_step(unit) builds the step; it is announced on
// the progress line as "<what><extern_call> (<label>)" and appended.
template <class Units, class MakeStep>
void add_unit_steps(const Units &units, PlanBuilder &b, const std::string &what, MakeStep make_step) {
  for (const auto &unit : units) {
    PlanStep step = make_step(unit);
    b.progress(what + step.extern_call + " (" + step.label + ")");
    b.add_step(std::move(step));
  }
}

}  // namespace disco
