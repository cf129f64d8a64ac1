// Runs a Plan: binds symbols from the input shapes, verifies every check,
// evaluates buffer sizes, allocates (reusing memory across runs) and calls the
// kernels of the shared library in order. It links neither Halide nor ONNX,
// so it also serves processes that must not load libHalide (OpenCL on PoCL).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/checked_size.h"
#include "frontend/tensor_data.h"
#include "runtime/memory_plan.h"
#include "runtime/plan.h"
#include "runtime/shape_binder.h"
#include "runtime/symbol_slots.h"

namespace disco {

class KernelLibrary;
class ExternKernel;
class ChildExecutor;
class MappedFile;
class LoopRunner;
struct RunScratch;

class Executor {
 public:
  // `dir` holds the plan's kernel library and constants file (if it has them).
  // Extern steps need their backend's glue in ExternKernelRegistry::global().
  // A plan whose kernels use OpenCL runs in a child process (disco-exec,
  // runtime/child_executor.h) unless `allow_child` is false: PoCL crashes in
  // a process that has loaded libHalide.
  Executor(Plan plan, const std::string &dir, bool allow_child = true);
  ~Executor();

  // An executor is used by one thread at a time: a run writes its scratch,
  // arena, symbols and extern kernels' per-shape state. clone() makes another
  // for another thread. It shares this one's plan, kernel library and
  // constants (read-only after loading) and has its own run state and extern
  // kernel objects; it copies the thread count, memory limit and profiling
  // switch. A plan run in a child process gets its own child process.
  std::unique_ptr<Executor> clone() const;

  // Inputs in the plan's input order. Throws disco::Error naming the input
  // and dim on a shape or dtype mismatch, before any kernel runs.
  std::vector<TensorData> run(const std::vector<TensorData> &inputs);
  // The same, writing into `outputs`: a tensor whose dtype and shape already
  // match is written in place, so repeated runs touch no fresh memory.
  void run(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs);

  // Per-step wall time, summed over the runs since profiling was switched on.
  struct StepTime {
    std::string label;
    double ms = 0;
  };
  void set_profiling(bool on);
  std::vector<StepTime> profile() const;
  const Plan &plan() const { return plan_; }
  // The last run's symbols by name (built when asked: runs bind by slot).
  const SymbolValues &last_symbols() const;
  void set_num_threads(int n);
  // Every buffer a run allocates (and the arena of intermediate values) is
  // checked against this before it is allocated; the default is
  // memory_limit(): $DISCO_MAX_MEMORY, else the physical memory.
  void set_memory_limit(MemoryLimit limit) { limit_ = std::move(limit); }

 private:
  struct CloneTag {};
  Executor(const Executor &from, CloneTag);
  // Everything after the library and constants are loaded: per-step kernels, symbols, scratch.
  void init();
  // Fails with the memory limit's message unless a `shape` buffer of value `id` fits; returns its bytes.
  int64_t checked_buffer_bytes(int id, const std::vector<int64_t> &shape) const;
  // Fails unless a `shape` buffer fits a Halide kernel (kMaxKernelBufferElements,
  // frontend/checked_size.h); `what` names it in the message, built only then.
  template <typename What>
  void check_fits_kernel(const std::vector<int64_t> &shape, What what) const;
  template <typename Bufs, typename Shapes, typename Alloc>
  void run_host_step(const PlanStep &step, Bufs &bufs, Shapes &shapes, Alloc &allocate);

  Plan plan_;
  std::string dir_;
  std::unique_ptr<ChildExecutor> child_;
  std::shared_ptr<KernelLibrary> lib_;  // shared with clones
  std::vector<int (*)(void **)> kernels_;
  std::vector<std::unique_ptr<ExternKernel>> externs_;  // per step; null for other steps
  // Per buffer, and per input: whether a Halide kernel reads or writes it.
  // Such a buffer holds at most kMaxKernelBufferElements; others (a oneDNN
  // call's, a host op's) are not limited to that.
  std::vector<char> kernel_buffer_, kernel_input_;
  std::vector<std::unique_ptr<LoopRunner>> loops_;  // per step: run-time Loops' bodies (runtime/loop_runner.h); null for other steps
  // The constants file, mapped (runtime/mapped_file.h); shared with clones,
  // never written. Null when the plan has no constants.
  std::shared_ptr<const MappedFile> constants_;
  // Temps live in one arena placed by lifetime (runtime/memory_plan.h), kept
  // across runs: fresh pages are slow to touch. When a temp's size depends on
  // a host op's output (known only mid-run), each temp gets its own storage.
  bool plan_arena();
  std::vector<BufferLifetime> lifetimes_;
  std::vector<int> shared_;           // per buffer: the one whose arena bytes it takes (shared_buffers)
  std::vector<int64_t> arena_bytes_;  // the sizes the current layout was made for
  std::optional<std::vector<int64_t>> arena_symbols_;  // the symbols they were evaluated for, once planned
  ArenaLayout layout_;
  AlignedBytes arena_;
  bool arena_active_ = false;
  std::vector<AlignedBytes> temps_;
  // Symbols by slot (runtime/symbol_slots.h): the plan's per-run shapes and
  // kernel arguments are compiled over one table when the plan is loaded.
  ShapeBinder binder_;
  std::vector<SlotShape> buffer_shapes_;  // per buffer
  std::vector<SlotShape> step_symbols_;  // per step: its kernel's symbol arguments, over the slots
  BoundSymbols symbols_;
  mutable SymbolValues last_symbols_;  // by name: last_symbols(), or a child process's reply
  // A run's buffers, shapes and call arguments, kept from run to run so that
  // a small model's run allocates nothing once its shapes repeat.
  std::unique_ptr<RunScratch> scratch_;
  bool profiling_ = false;
  int threads_ = 0;  // set_num_threads' last value, for clones
  std::vector<double> step_ms_;
  MemoryLimit limit_ = memory_limit();
};

}  // namespace disco
