#include "driver/compile_model.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "driver/cache_entry_in_use.h"
#include "driver/compile_cache.h"
#include "frontend/checked_size.h"
#include "frontend/content_hash.h"
#include "frontend/errors.h"
#include "frontend/file_util.h"
#include "frontend/onnx_importer.h"
#include "lowering/graph_rewrites.h"
#include "lowering/weight_layout.h"
#include "lowering/infer_context.h"
#include "lowering/lower_graph.h"
#include "lowering/ops/run_time_loop.h"
#include "targets/gpu/gpu_target.h"
#include "driver/cache_manifest.h"
#include "frontend/file_checksum.h"
#include "targets/kernel_store.h"
#include "targets/plan_builder.h"

namespace disco {

namespace {

std::atomic<int> g_compiles{0};

// A change to the compiler must not reuse old kernels: hash our own binary.
// With file_checksum's read loop (a few ms for the 5 MB binary; an
// ifstream copied into a string and hashed a byte at a time took most of a
// warm start's 0.07 s).
uint64_t compiler_id() {
  static const uint64_t id = [] {
    const auto sum = file_checksum("/proc/self/exe");
    DISCO_CHECK(sum, "cannot read this program's own file (/proc/self/exe) to key the compile cache");
    return *sum;
  }();
  return id;
}

// Uncached compiles live in private folders that nothing reuses; a loaded
// library may be unlinked, so they go when the process ends.
std::mutex g_tmp_mu;
std::vector<std::string> &tmp_dirs() {
  static auto *dirs = new std::vector<std::string>();  // never destroyed: used by the atexit handler
  return *dirs;
}

void remove_tmp_dirs() {
  std::lock_guard<std::mutex> lock(g_tmp_mu);
  std::error_code ec;
  for (const auto &d : tmp_dirs()) std::filesystem::remove_all(d, ec);
}

void remove_at_exit(const std::string &dir) {
  static const bool registered = (std::atexit(remove_tmp_dirs), true);
  (void)registered;
  std::lock_guard<std::mutex> lock(g_tmp_mu);
  tmp_dirs().push_back(dir);
}


std::string dir_name(const std::string &s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out.empty() ? "model" : out;
}

std::string backend_list(const std::vector<const Backend *> &bs) {
  std::string s;
  for (const auto *b : bs) s += (s.empty() ? "" : ",") + b->name();
  return s;
}

void pin_static_shapes(Graph &g, const std::map<std::string, std::vector<int64_t>> &shapes) {
  for (const auto &[name, dims] : shapes) {
    const int vid = g.find_value(name);
    const bool is_input = std::find(g.inputs.begin(), g.inputs.end(), vid) != g.inputs.end();
    DISCO_CHECK(vid >= 0 && is_input, "--static names '", name, "', which is not an input of the model");
    Value &v = g.value(vid);
    DISCO_CHECK(v.shape && v.shape->size() == dims.size(), "--static gives input '", name, "' ", dims.size(),
                " dims; it has ", v.shape ? v.shape->size() : 0);
    for (size_t d = 0; d < dims.size(); ++d) {
      const Dim &declared = (*v.shape)[d];
      DISCO_CHECK(!declared.is_const() || declared.as_const() == dims[d], "--static gives input '", name, "' dim ", d,
                  " = ", dims[d], "; the model fixes it to ", declared.as_const());
      (*v.shape)[d] = Dim(dims[d]);
    }
  }
}

void apply_hints(ShapeStore &store, const std::map<std::string, int64_t> &hints) {
  for (const auto &[sym, value] : hints) {
    DISCO_CHECK(store.has_symbol(sym), "--hint names '", sym, "', which is not a symbolic dim of the model");
    DISCO_CHECK(value > 0, "--hint ", sym, "=", value, ": a likely value must be positive");
    Dim rep = store.canonical(Dim::symbol(sym));
    if (!rep.is_symbol()) continue;  // pinned to a constant already: nothing to speculate on
    auto &likely = store.facts(rep.symbol_name()).likely;
    if (std::find(likely.begin(), likely.end(), value) == likely.end()) likely.push_back(value);
  }
}

// A calibration sample (FILE.npy or INPUT=FILE.npy) by its text and its bytes:
// another file under the same name is another compile.
void add_sample_file(ContentHash &h, const std::string &sample) {
  const size_t eq = sample.find('=');
  const std::string path = eq == std::string::npos ? sample : sample.substr(eq + 1);
  h.add("calibration:" + sample);
  if (file_exists(path)) h.add(read_file(path));  // a missing file: the backend names it when it reads the samples
}

void warn(const CompileOptions &opts, const std::string &message) {
  if (opts.warning) opts.warning(message);
  else std::fprintf(stderr, "disco: warning: %s\n", message.c_str());
}

std::function<void(const std::string &)> warner(const CompileOptions &opts) {
  return [&opts](const std::string &message) { warn(opts, message); };
}

// The code generator's runtime is the same for every model of a target: built
// once per cache and kept in its root as a stored object with its checksum
// (targets/kernel_store.h), checked before each link. A damaged one linked
// into every later kernel library (a truncated one failed every link; one
// with other bytes crashed every run, as it passed the library's own
// checksum); now it gives one warning and is built again. Placed in `dir`
// (as NAME.o: the AOT library's halide_runtime.o may be written there), for
// the link or the AOT library.
std::string runtime_object(const std::string &root, const std::string &dir, const CompileOptions &opts,
                           const Backend &fallback) {
  const uint64_t id = compiler_id();
  const std::string key = "Halide runtime for " + opts.target + " by compiler " + hex64(id);
  const std::string name = "halide_runtime-" + ContentHash().add(key).hex();
  const std::string path = dir + "/" + name + ".o";
  const KernelStore store(root, warner(opts));
  if (store.fetch(name, key, path)) return path;
  fallback.write_runtime_object(opts.target, path);
  store.publish(name, key, path);
  return path;
}

// Builds the plan and compiles every kernel into `dir`.

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Plan build(Graph &g, const ShapeStore &store, const std::string &name, const std::string &dir,
           const std::string &runtime_root, const CompileOptions &opts, const KernelStore *kernels,
           std::vector<std::string> *kept, CompileProfile *profile, const std::string &bodies_dir = "") {
  // Run-time loops' bodies: plans of their own beside this one (lowering/ops/run_time_loop.h).
  const std::string top = bodies_dir.empty() ? dir : bodies_dir;
  compile_loop_bodies(g, name, top, opts.keep_objects,
                      [&](Graph &body, const ShapeStore &s, const std::string &body_name, const std::string &body_dir) {
                        std::vector<std::string> body_kept;
                        CompileProfile body_profile;
                        return build(body, s, body_name, body_dir, runtime_root, opts, kernels, &body_kept,
                                     &body_profile, top);
                      });
  auto backends = make_backends(opts.backends, opts.backend_options);
  if (const int n = prepare_graph_for(backends, g); n > 0 && opts.progress)
    opts.progress("split " + std::to_string(n) + " node(s) for the backends (Backend::prepare_graph)");
  const Backend &fallback = *backends.back();  // host: make_backends puts it last
  std::vector<const Backend *> order;
  for (const auto &b : backends) order.push_back(b.get());
  if (opts.progress) opts.progress("partitioning for " + backend_list(order));
  const auto t_partition = std::chrono::steady_clock::now();
  Partition part = partition_graph(g, store, order, opts.partition);
  const double partition_s = seconds_since(t_partition);
  for (Region &r : part.regions)
    for (const Backend *b : order)
      if (b->name() == r.backend) b->prepare_region(g, r, opts.target);
  PlanBuilder builder(g, store, name, dir, opts.target, opts.progress);
  builder.use_kernel_store(kernels);
  builder.set_kernel_progress(opts.kernel_progress);
  builder.profile().partition_s = partition_s;
  compile_partition(part, order, opts.partition, builder);
  std::vector<int> seen;
  for (int o : g.outputs) {
    bool repeat = std::find(seen.begin(), seen.end(), o) != seen.end();
    seen.push_back(o);
    const auto unwritten = builder.unwritten_outputs();
    if (repeat || std::find(unwritten.begin(), unwritten.end(), o) != unwritten.end()) fallback.compile_output_copy(o, builder);
  }
  builder.compile_kernels(opts.compile_workers);
  Plan plan = builder.finish();
  *profile = builder.profile();
  if (opts.keep_objects) {
    *kept = builder.objects();
    const auto t_runtime = std::chrono::steady_clock::now();
    kept->push_back(runtime_object(runtime_root, dir, opts, fallback));
    profile->runtime_s = seconds_since(t_runtime);
  } else if (!builder.objects().empty()) {
    builder.progress("linking " + std::to_string(builder.objects().size()) + " kernels");
    const auto t_runtime = std::chrono::steady_clock::now();
    const std::string runtime = runtime_object(runtime_root, dir, opts, fallback);
    profile->runtime_s = seconds_since(t_runtime);
    const auto t_link = std::chrono::steady_clock::now();
    std::vector<std::string> objects = builder.objects();
    objects.push_back(runtime);
    plan.library = "kernels.so";
    fallback.link_kernel_library(objects, dir + "/" + plan.library);
    for (const auto &o : objects) std::remove(o.c_str());
    profile->link_s = seconds_since(t_link);
  }
  return plan;
}

}  // namespace

int compile_count() { return g_compiles.load(); }

void select_gpu_target(CompileOptions &opts, bool backends_given) {
  opts.target = expand_gpu_target(opts.target);
  const std::string api = gpu_api_of(opts.target);
  if (!api.empty() && !backends_given) opts.backends = {api};
}

std::string cache_root(const CompileOptions &o) {
  if (!o.cache_dir.empty()) return o.cache_dir;
  if (const char *d = std::getenv("DISCO_CACHE_DIR"); d && *d) return d;
  if (const char *d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/disco";
  if (const char *d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/disco";
  return "/tmp/disco-cache";
}

namespace {

// The cache entry's folder for a model of this name and content key under these options.
std::string entry_dir(const std::string &root, const std::string &name, const std::string &key,
                      const CompileOptions &opts) {
  const uint64_t id = compiler_id();
  ContentHash h;
  h.add(key).add(opts.target).add(&id, sizeof id);
  for (const auto &b : opts.backends) h.add("backend:" + b);
  for (const auto &[b, n] : opts.partition.min_region_nodes) h.add("min:" + b + "=" + std::to_string(n));
  for (const auto &[sym, v] : opts.hints) h.add("hint:" + sym + "=" + std::to_string(v));
  for (const auto &sample : opts.backend_options.calibration_samples) add_sample_file(h, sample);
  for (const auto &[in, dims] : opts.static_shapes) {
    h.add("static:" + in);
    for (int64_t d : dims) h.add(&d, sizeof d);
  }
  return root + "/" + dir_name(name) + "-" + h.hex();
}

// A new tmp-* folder in `root` (made if missing); "" with errno set when it cannot be.
std::string private_folder(const std::string &root) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) {
    errno = ec.value();
    return "";
  }
  std::string tmp = root + "/tmp-XXXXXX";
  return mkdtemp(tmp.data()) ? tmp : "";
}

}  // namespace

namespace {

// Values whose shapes are known at compile time are checked before any kernel
// is made: a 300-byte model asking for 8 TiB fails here, in milliseconds,
// instead of in Halide's bounds inference (whose text would reach the user)
// or at run time. Constants are in memory already and are not checked.
void check_known_sizes(const Graph &g, const ShapeStore &store, const MemoryLimit &limit) {
  for (size_t id = 0; id < g.values.size(); ++id) {
    const Value &v = g.values[id];
    if (!v.shape || v.constant || v.dtype == DType::Undefined) continue;
    std::vector<int64_t> dims;
    for (const Dim &d : *v.shape) {
      const Dim c = store.canonical(d);
      if (!c.is_const()) break;
      dims.push_back(c.as_const());
    }
    if (dims.size() != v.shape->size()) continue;
    std::string what = "value '" + v.name + "'";
    if (v.producer >= 0 && static_cast<size_t>(v.producer) < g.nodes.size()) {
      const Node &n = g.nodes[v.producer];
      if (std::find(n.outputs.begin(), n.outputs.end(), static_cast<int>(id)) != n.outputs.end())
        what += " (output of " + n.where() + ")";
    }
    limit.check(what, dims, v.dtype);
    for (size_t i = 0; i < dims.size(); ++i)
      DISCO_CHECK(dims[i] <= INT32_MAX, what, " dim ", i, " is ", dims[i],
                  ", above the 2147483647 that a kernel's buffer dim can hold");
    // Halide's bounds inference refused [32768, 65536, 1] float32 (8 GiB,
    // under the memory limit) in its own words: "may be accessed in an unbounded way".
    check_kernel_buffer_elements(what, dims);
  }
}

}  // namespace

std::optional<CompiledModel> find_cached(const std::string &name, const std::string &key, const CompileOptions &opts) {
  if (!opts.use_cache || opts.keep_objects || key.empty()) return std::nullopt;
  const auto t0 = std::chrono::steady_clock::now();
  CompiledModel m;
  const std::string root = cache_root(opts);
  m.dir = entry_dir(root, name, key, opts);
  if (!file_exists(m.dir + "/plan.txt")) return std::nullopt;
  // In use from here, so no other process's eviction removes it before it is
  // loaded; one that removed it already is a miss, not an error.
  auto in_use = CacheEntryInUse::mark(m.dir);
  if (!in_use) return std::nullopt;
  // Every file checked before the library is loaded or the constants mapped.
  if (auto problem = verify_cache_manifest(m.dir)) {
    if (!in_use->is_at(m.dir)) return std::nullopt;  // discarded by another process while we read it
    warn(opts, "the compile cache entry '" + m.dir + "' is damaged (" + *problem + "); compiling the model again");
    discard_cache_entry(root, m.dir, *in_use);
    return std::nullopt;
  }
  try {
    m.plan = Plan::load(m.dir + "/plan.txt");
  } catch (const Error &) {
    if (!in_use->is_at(m.dir)) return std::nullopt;  // as above
    throw;
  }
  m.in_use = std::move(in_use);
  m.cache_hit = true;
  touch_cache_entry(m.dir);
  m.seconds = seconds_since(t0);
  return m;
}

CompiledModel compile_graph(Graph g, const std::string &name, const std::string &key, const CompileOptions &opts) {
  auto t0 = std::chrono::steady_clock::now();
  if (auto hit = find_cached(name, key, opts)) return std::move(*hit);
  CompiledModel m;
  bool cached = opts.use_cache && !opts.keep_objects && !key.empty();
  std::string root = cache_root(opts);
  const uint64_t id = compiler_id();
  // Build in a private folder, then rename: concurrent compiles never see half a result.
  std::string tmp = private_folder(root);
  if (tmp.empty()) {
    // An unwritable cache (a read-only home, another user's folder): compile in a
    // temporary folder of our own, removed at exit, and cache nothing.
    const int err = errno;
    std::string scratch = (std::filesystem::temp_directory_path() / "disco-XXXXXX").string();
    DISCO_CHECK(mkdtemp(scratch.data()), "cannot create a folder in '", root, "' (", std::strerror(err),
                ") or in the temporary folder");
    remove_at_exit(scratch);
    warn(opts, "the compile cache folder '" + root + "' cannot be written (" + std::strerror(err) +
                   "); compiling in '" + scratch + "' without caching");
    root = scratch;
    cached = false;
    tmp = private_folder(root);
    DISCO_CHECK(!tmp.empty(), "cannot create a folder in '", root, "'");
  }
  m.dir = entry_dir(root, name, key, opts);
  if (opts.progress) opts.progress("inferring shapes");
  try {
    ShapeStore store;
    const auto t_shapes = std::chrono::steady_clock::now();
    pin_static_shapes(g, opts.static_shapes);
    infer_shapes(g, store);
    check_known_sizes(g, store, memory_limit(opts.max_memory));
    if (const int removed = rewrite_graph(g); removed > 0 && opts.progress)
      opts.progress("graph rewrites folded " + std::to_string(removed) + " node(s) into their neighbours");
    if (const int packed = transpose_constant_weights(g); packed > 0 && opts.progress)
      opts.progress("transposed " + std::to_string(packed) + " constant Gemm weight(s) for the dot kernels");
    apply_hints(store, opts.hints);
    const double shapes_s = seconds_since(t_shapes);
    // Kernels shared with the cache's other models: only for cached JIT
    // compiles (AOT kernels are named after their model, to link together).
    const KernelStore kernels(root + "/kernels-" + ContentHash().add(&id, sizeof id).hex(), warner(opts));
    m.plan = build(g, store, name, tmp, root, opts, cached ? &kernels : nullptr, &m.objects, &m.profile);
    m.profile.shapes_s = shapes_s;
    m.plan.save(tmp + "/plan.txt");
    if (cached) write_cache_manifest(tmp);  // last: it covers every file of the entry
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);  // a failed compile leaves nothing behind
    throw;
  }
  ++g_compiles;
  if (cached) {
    // In use before anyone else can find it: no eviction removes it before this process loads it.
    m.in_use = CacheEntryInUse::mark(tmp);
    if (std::rename(tmp.c_str(), m.dir.c_str()) != 0) {
      // Another process finished first; use ours anyway, it is complete, and drop it at exit.
      m.dir = tmp;
      remove_at_exit(tmp);
    }
    const int evicted = evict_cache_entries(root, cache_limit_bytes(), m.dir);
    if (evicted > 0 && opts.progress)
      opts.progress("compile cache: removed " + std::to_string(evicted) + " least recently used entries");
  } else {
    m.dir = tmp;
    remove_at_exit(tmp);
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

std::string model_name_of(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  const std::string file = path.substr(slash == std::string::npos ? 0 : slash + 1);
  return file.substr(0, file.find('.'));
}

ModelSource load_model_source(const std::string &path) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string bytes = read_file(path);
  const size_t slash = path.find_last_of('/');
  ModelSource m{load_onnx_bytes(bytes, slash == std::string::npos ? "." : path.substr(0, slash), path), "", ""};
  m.name = model_name_of(path);
  m.key = ContentHash().add(bytes).hex();
  m.seconds = seconds_since(t0);
  return m;
}

CompiledModel compile_onnx(const std::string &model_path, const CompileOptions &opts) {
  if (opts.progress) opts.progress("parsing " + model_path);
  ModelSource m = load_model_source(model_path);
  const double import_s = m.seconds;
  CompiledModel cm = compile_graph(std::move(m.graph), m.name, m.key, opts);
  cm.profile.import_s = import_s;
  return cm;
}

}  // namespace disco
