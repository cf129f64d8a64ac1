// The compile driver: ONNX or Graph in, Plan plus kernel library out.
// frontend -> shape inference -> fusion -> lowering -> schedules -> codegen.
// Results are cached on disk, keyed by the model bytes, the options and the
// compiler binary, so a second run of an unchanged model compiles nothing.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "targets/compile_profile.h"
#include "frontend/graph.h"
#include "driver/backend_registry.h"
#include "driver/cache_entry_in_use.h"
#include "runtime/plan.h"
#include "targets/partitioner.h"

namespace disco {

struct CompileOptions {
  std::string target = "host";                 // Halide target of host code
  // Priority order; host is implied last. oneDNN runs MatMul/Gemm/Conv by default:
  // it is several times faster than the host backend's GEMMs.
  std::vector<std::string> backends = {"onednn", "host"};
  PartitionOptions partition;
  // Pins graph inputs to one shape ("x" -> {2, 128, 768}): a fully static
  // compile, the yardstick the dynamic compile is measured against.
  std::map<std::string, std::vector<int64_t>> static_shapes;
  // Likely values of symbols ("seq" -> 128): schedules specialize for them and
  // keep a generic branch for every other value.
  std::map<std::string, int64_t> hints;
  // Options for particular backends (vitis_ai's calibration samples); part of the cache key, files by content.
  BackendOptions backend_options;
  std::string cache_dir;  // empty: $DISCO_CACHE_DIR, else $XDG_CACHE_HOME/disco, else ~/.cache/disco
  bool use_cache = true;
  // AOT (driver/aot/): keep the kernel objects in the compile folder and link
  // no shared library; CompiledModel::objects lists them.
  bool keep_objects = false;
  // Processes that compile Halide kernels at once; 0: one per core. Any count
  // gives the same objects (targets/kernel_jobs.h).
  int compile_workers = 0;
  std::function<void(const std::string &)> progress;  // one line per stage and kernel
  // Each Halide kernel compiled: `done` of `total` (the CLI's progress bar,
  // tools/progress_display.h). Kernels from the cache do not count.
  std::function<void(size_t done, size_t total)> kernel_progress;
  // The most bytes one value of a run may take (and the intermediate values
  // together); 0: $DISCO_MAX_MEMORY, else the physical memory
  // (frontend/checked_size.h). Checked at compile time for constant shapes and
  // by the executor before each allocation; not part of the cache key.
  int64_t max_memory = 0;
  // Problems disco recovers from (a damaged cache entry compiled again); empty: a line on stderr.
  std::function<void(const std::string &)> warning;
};

struct CompiledModel {
  Plan plan;
  std::string dir;  // holds plan.txt, the kernel library and the constants file
  bool cache_hit = false;
  // keep_objects: the kernel objects (in `dir`), then Halide's runtime object.
  std::vector<std::string> objects;
  double seconds = 0;
  CompileProfile profile;  // phase times of this compile (zero on a cache hit)
  // The cache entry `dir` marked in use while this (or a copy) lives, so that no
  // process's eviction removes it (driver/cache_entry_in_use.h); null when uncached.
  std::shared_ptr<const CacheEntryInUse> in_use;
};

// A parsed ONNX file, its file stem, and a hash of its bytes (the cache key).
struct ModelSource {
  Graph graph;
  std::string name;
  std::string key;
  double seconds = 0;  // reading and parsing the file
};
ModelSource load_model_source(const std::string &path);
// The model name of an ONNX file: its file stem up to the first dot.
std::string model_name_of(const std::string &path);
// The root folder of the compile cache for these options.
std::string cache_root(const CompileOptions &opts);

// compile_graph's cache hit without the graph: the compile cache's entry for a
// model of this name and content key compiled with these options, if it holds
// one (never when caching is off).
std::optional<CompiledModel> find_cached(const std::string &name, const std::string &key, const CompileOptions &opts);

CompiledModel compile_onnx(const std::string &model_path, const CompileOptions &opts);
// `key` identifies the graph for the cache (e.g. a hash of its source).
CompiledModel compile_graph(Graph g, const std::string &name, const std::string &key, const CompileOptions &opts);

// Expands a short GPU target name in opts.target (targets/gpu/gpu_target.h); with
// `backends_given` false, a GPU target's backend replaces the default list.
void select_gpu_target(CompileOptions &opts, bool backends_given);

// How many fresh compiles this process has run (cache hits do not count).
int compile_count();

}  // namespace disco
