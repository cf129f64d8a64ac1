#include "targets/compile_model.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "frontend/errors.h"
#include "frontend/file_util.h"
#include "frontend/onnx_importer.h"
#include "lowering/infer_context.h"
#include "lowering/lower_graph.h"
#include "schedules/fusion.h"
#include "schedules/x86_schedule.h"
#include "targets/content_hash.h"
#include "targets/host/host_codegen.h"

namespace disco {

namespace {

std::atomic<int> g_compiles{0};

// A change to the compiler must not reuse old kernels: hash our own binary.
uint64_t compiler_id() {
  static const uint64_t id = [] {
    std::ifstream f("/proc/self/exe", std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ContentHash().add(ss.str()).value();
  }();
  return id;
}

void make_dirs(const std::string &path) {
  for (size_t p = 1; p <= path.size(); ++p) {
    if (p == path.size() || path[p] == '/') {
      std::string sub = path.substr(0, p);
      if (mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST) fail("cannot create directory '", sub, "'");
    }
  }
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

std::string cache_root(const CompileOptions &o) {
  if (!o.cache_dir.empty()) return o.cache_dir;
  if (const char *d = std::getenv("DISCO_CACHE_DIR"); d && *d) return d;
  if (const char *d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/disco";
  if (const char *d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/disco";
  return "/tmp/disco-cache";
}

bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string sanitize(const std::string &s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "m_" + out;
  return out;
}

std::string group_label(const Graph &g, const FusionGroup &gr) {
  std::string s = group_kind_name(gr.kind);
  s += ":";
  for (int n : gr.nodes) s += " " + g.nodes[n].name;
  if (gr.nodes.empty()) s += " " + g.value(gr.outputs[0]).name;
  return s;
}

// Builds the plan and compiles every kernel into `dir`.
// Halide's runtime is the same for every model of a target: build it once per cache.
std::string runtime_object(const std::string &root, const Halide::Target &target) {
  const std::string t = target.to_string();
  const uint64_t id = compiler_id();
  const std::string path = root + "/halide_runtime-" + ContentHash().add(t).add(&id, sizeof id).hex() + ".o";
  if (exists(path)) return path;
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  compile_runtime_object(tmp, target);
  std::rename(tmp.c_str(), path.c_str());
  return path;
}

Plan build(Graph &g, const ShapeStore &store, const std::string &name, const std::string &dir,
           const std::string &runtime_obj, const CompileOptions &opts) {
  auto say = [&](const std::string &s) {
    if (opts.progress) opts.progress(s);
  };
  Halide::Target target = parse_target(opts.target);
  std::vector<FusionGroup> groups = plan_fusion(g, store);

  Plan plan;
  plan.name = name;
  plan.checks = store.checks();
  plan.library = "kernels.so";
  std::map<int, int> buffer_of;  // value id -> buffer id
  auto add_buffer = [&](PlanBuffer::Kind kind, int vid, int io) {
    const Value &v = g.value(vid);
    plan.buffers.push_back({kind, v.name, v.dtype, *v.shape, io});
    return static_cast<int>(plan.buffers.size()) - 1;
  };
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value &v = g.value(g.inputs[i]);
    plan.inputs.push_back({v.name, v.dtype, *v.shape});
    int b = add_buffer(PlanBuffer::Input, g.inputs[i], static_cast<int>(i));
    buffer_of[g.inputs[i]] = b;
    plan.input_buffers.push_back(b);
  }
  plan.output_buffers.assign(g.outputs.size(), -1);
  for (int o : g.outputs) plan.output_names.push_back(g.value(o).name);
  auto output_slot = [&](int vid) {
    for (size_t p = 0; p < g.outputs.size(); ++p)
      if (g.outputs[p] == vid && plan.output_buffers[p] < 0) return static_cast<int>(p);
    return -1;
  };

  std::vector<std::string> objects, kernel_objects_to_remove;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const FusionGroup &gr = groups[gi];
    const std::string kname = sanitize(name) + "_k" + std::to_string(gi);
    const std::string label = group_label(g, gr);
    say("[" + std::to_string(gi + 1) + "/" + std::to_string(groups.size()) + "] kernel " + kname + " (" + label + ")");
    PlanStep step;
    step.kernel = kname;
    step.label = label;
    auto add_output = [&](int vid) {
      int slot = output_slot(vid);
      int b = add_buffer(slot >= 0 ? PlanBuffer::Output : PlanBuffer::Temp, vid, slot);
      if (slot >= 0) plan.output_buffers[slot] = b;
      if (gr.kind != GroupKind::Copy || !buffer_of.count(vid)) buffer_of[vid] = b;
      step.outputs.push_back(b);
    };
    if (gr.kind == GroupKind::Host) {
      const Node &node = g.nodes[gr.nodes.at(0)];
      step.host_op = node.op_type;
      for (const auto &[name, a] : node.attrs)
        if (a.kind == Attribute::Int) step.host_attrs[name] = a.i;
      for (int vid : node.inputs) step.inputs.push_back(vid < 0 ? -1 : buffer_of.at(vid));
      for (int vid : node.outputs) {
        bool used = vid >= 0 && std::find(gr.outputs.begin(), gr.outputs.end(), vid) != gr.outputs.end();
        if (used) add_output(vid);
        else step.outputs.push_back(-1);
      }
      plan.steps.push_back(std::move(step));
      continue;
    }
    LoweredKernel k = lower_nodes(g, store, gr.nodes, gr.outputs);
    schedule_x86(k, target);
    for (int vid : k.input_values) {
      auto it = buffer_of.find(vid);
      DISCO_CHECK(it != buffer_of.end(), "internal: kernel ", kname, " reads '", g.value(vid).name,
                  "' before any kernel writes it");
      step.inputs.push_back(it->second);
    }
    for (auto &[sym, p] : k.syms.used()) step.symbols.push_back(sym);
    for (int vid : k.output_values) add_output(vid);
    const std::string obj = dir + "/" + kname + ".o";
    compile_kernel_object(k, kname, obj, target);
    objects.push_back(obj);
    plan.steps.push_back(std::move(step));
  }
  for (size_t p = 0; p < g.outputs.size(); ++p)
    DISCO_CHECK(plan.output_buffers[p] >= 0, "internal: no kernel writes output '", g.value(g.outputs[p]).name, "'");
  say("linking " + std::to_string(objects.size()) + " kernels");
  for (const auto &o : objects) kernel_objects_to_remove.push_back(o);
  objects.push_back(runtime_obj);
  link_shared_library(objects, dir + "/" + plan.library);
  for (const auto &o : kernel_objects_to_remove) std::remove(o.c_str());
  return plan;
}

}  // namespace

std::string ContentHash::hex() const {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h_));
  return b;
}

int compile_count() { return g_compiles.load(); }

CompiledModel compile_graph(Graph g, const std::string &name, const std::string &key, const CompileOptions &opts) {
  auto t0 = std::chrono::steady_clock::now();
  CompiledModel m;
  const bool cached = opts.use_cache && !key.empty();
  const std::string root = cache_root(opts);
  const uint64_t id = compiler_id();
  const std::string full_key = ContentHash().add(key).add(opts.target).add(&id, sizeof id).hex();
  m.dir = root + "/" + sanitize(name) + "-" + full_key;
  if (cached && exists(m.dir + "/plan.txt")) {
    m.plan = Plan::load(m.dir + "/plan.txt");
    m.library_path = m.dir + "/" + m.plan.library;
    m.cache_hit = true;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return m;
  }
  // Build in a private folder, then rename: concurrent compiles never see half a result.
  make_dirs(root);
  std::string tmp = root + "/tmp-XXXXXX";
  DISCO_CHECK(mkdtemp(tmp.data()), "cannot create a folder in '", root, "'");
  if (opts.progress) opts.progress("inferring shapes");
  try {
    ShapeStore store;
    infer_shapes(g, store);
    m.plan = build(g, store, name, tmp, runtime_object(root, parse_target(opts.target)), opts);
    m.plan.save(tmp + "/plan.txt");
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);  // a failed compile leaves nothing behind
    throw;
  }
  ++g_compiles;
  if (cached) {
    if (std::rename(tmp.c_str(), m.dir.c_str()) != 0) {
      // Another process finished first; use ours anyway, it is complete.
      m.dir = tmp;
    }
  } else {
    m.dir = tmp;
    remove_at_exit(tmp);
  }
  m.library_path = m.dir + "/" + m.plan.library;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

ModelSource load_model_source(const std::string &path) {
  const std::string bytes = read_file(path);
  const size_t slash = path.find_last_of('/');
  ModelSource m{load_onnx_bytes(bytes, slash == std::string::npos ? "." : path.substr(0, slash), path), "", ""};
  m.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  m.name = m.name.substr(0, m.name.find('.'));
  m.key = ContentHash().add(bytes).hex();
  return m;
}

CompiledModel compile_onnx(const std::string &model_path, const CompileOptions &opts) {
  if (opts.progress) opts.progress("parsing " + model_path);
  ModelSource m = load_model_source(model_path);
  return compile_graph(std::move(m.graph), m.name, m.key, opts);
}

}  // namespace disco
