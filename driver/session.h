// A Session owns one model and runs it: the object users, the CLI and the
// conformance runner hold.
//
// Most models compile once, with symbolic shapes, when the session is made.
// Some ops need an input's *values* at compile time: a Reshape target, Reduce
// axes or TopK's k given as graph inputs. Then the session compiles at run
// time, with those inputs' values as constants, once for each distinct set of
// values (each compile is cached like any other). Everything else stays
// symbolic, so one compile still serves every shape of the other inputs.
//
// Threads: run() may be called from several threads at once on one session.
// Each compile keeps a pool of executors (runtime/executor.h); a run takes an
// idle one, or clones one when all are busy, so concurrent runs have their own
// scratch, arena of intermediates and extern kernel objects (oneDNN's
// primitives cached per shape) and share the kernel library and the weights,
// which nothing writes. A pool grows to the largest number of runs that were
// in flight at once and keeps them. Finding or compiling the run's compile is
// done under a lock, so compiles at run time happen one at a time. The other
// methods (set_num_threads, set_profiling, profile, last_compile,
// last_symbols) are meant for when no run is in flight; last_* and profile()
// then describe the last run to start and its compile's runs. Each run's
// parallel loops use an OpenMP team of its calling thread (set_num_threads
// bounds each team, not their sum).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "driver/compile_model.h"

namespace disco {

class Session {
 public:
  Session(Graph g, std::string name, std::string cache_key, CompileOptions opts);
  static Session from_onnx(const std::string &path, CompileOptions opts);
  Session(Session &&) = default;
  ~Session();

  // Inputs in graph order; checks dtypes and shapes before anything runs.
  std::vector<TensorData> run(const std::vector<TensorData> &inputs);
  // Writes into `outputs`, reusing their memory when dtypes and shapes match.
  void run(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs);

  const std::vector<InputSpec> &inputs() const { return inputs_; }
  const std::vector<std::string> &output_names() const { return output_names_; }
  // Inputs whose values are compiled in (see above), by position.
  const std::set<size_t> &value_inputs() const { return value_inputs_; }
  int compiles() const { return compiles_; }
  // Whether the model file was parsed: not on a warm start that the cache served whole.
  bool parsed() const { return graph_.has_value(); }
  // The compile that served the last run (or the eager one).
  const CompiledModel &last_compile() const;
  const SymbolValues &last_symbols() const;
  void set_num_threads(int n);
  // Per-step times of the compile that served the last run (see Executor).
  void set_profiling(bool on);
  std::vector<Executor::StepTime> profile() const;

 private:
  struct Variant {
    CompiledModel compiled;
    std::vector<std::unique_ptr<Executor>> execs;  // every executor made; the first made with the compile
    std::vector<Executor *> idle;  // those not running now
    Executor *last = nullptr;  // the one that served the last run to start
  };
  // Returns an idle executor of `v`, cloning one if none is idle. Called under mu_.
  Executor *take_executor(Variant &v);
  Variant &variant_for(const std::vector<TensorData> &inputs);
  std::unique_ptr<Variant> compile_variant(const std::vector<TensorData> *values);
  // The graph with the value inputs' values in `values` compiled in (and
  // removed from its inputs), and their hash; nullopt without values.
  std::optional<Graph> graph_with_values(const std::vector<TensorData> *values, std::string *values_hash);
  // After a failed run: marks the inputs that run-time Ifs' conditions come
  // from as value inputs; false when there are none not marked yet.
  bool bind_run_time_if_inputs(const std::vector<TensorData> &values);
  void run_once(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs);
  // A session over a model file whose compile the cache held (from_onnx): the
  // graph is parsed only if a compile needs it.
  Session(std::string path, std::string name, std::string cache_key, CompileOptions opts, CompiledModel cached);
  const Graph &graph();
  void make_variant(CompiledModel compiled, Variant &v);

  std::optional<Graph> graph_;
  std::string path_;  // the ONNX file to parse when graph_ is needed and empty
  std::string name_, key_;
  CompileOptions opts_;
  std::vector<InputSpec> inputs_;
  std::vector<std::string> output_names_;
  std::set<size_t> value_inputs_;
  std::map<std::string, std::unique_ptr<Variant>> variants_;
  Variant *last_ = nullptr;
  int compiles_ = 0;
  double import_seconds_ = 0;  // parsing the ONNX file (from_onnx), reported in each compile's profile
  int threads_ = 0;
  bool profiling_ = false;
  // Guards variants_, their pools, value_inputs_, last_ and compiles_ (a pointer: sessions move).
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

}  // namespace disco
