#include "driver/session.h"

#include <cstdio>
#include <cstring>

#include "driver/backend_registry.h"
#include "frontend/errors.h"
#include "frontend/onnx_importer.h"
#include "lowering/infer_context.h"
#include "lowering/known_values.h"
#include "driver/source_index.h"
#include "frontend/content_hash.h"

namespace disco {

namespace {

// The cache key of a session's compile whose value inputs hash to `values_hash`
// (the eager compile: no values, the empty hash).
std::string variant_cache_key(const std::string &model_key, const std::string &values_hash) {
  return model_key.empty() ? model_key : model_key + "|values:" + values_hash;
}

int input_position(const Graph &g, int value_id) {
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.inputs[i] == value_id) return static_cast<int>(i);
  return -1;
}

}  // namespace

Session::Session(Graph g, std::string name, std::string cache_key, CompileOptions opts)
    : graph_(std::move(g)), name_(std::move(name)), key_(std::move(cache_key)), opts_(std::move(opts)) {
  for (int id : graph_->inputs) {
    const Value &v = graph_->value(id);
    DISCO_CHECK(v.shape, "graph input '", v.name, "' has no shape; disco needs at least its rank");
    inputs_.push_back({v.name, v.dtype, *v.shape});
  }
  for (int id : graph_->outputs) output_names_.push_back(graph_->value(id).name);
  // Compile now unless some input's values are needed; then compile per values at run time.
  if (auto v = compile_variant(nullptr)) {
    last_ = v.get();
    variants_[""] = std::move(v);
  }
}

Session::Session(std::string path, std::string name, std::string cache_key, CompileOptions opts,
                 CompiledModel cached)
    : path_(std::move(path)), name_(std::move(name)), key_(std::move(cache_key)), opts_(std::move(opts)) {
  inputs_ = cached.plan.inputs;
  output_names_ = cached.plan.output_names;
  auto v = std::make_unique<Variant>();
  make_variant(std::move(cached), *v);
  last_ = v.get();
  variants_[""] = std::move(v);
}

const Graph &Session::graph() {
  if (!graph_) {
    if (opts_.progress) opts_.progress("parsing " + path_);
    ModelSource m = load_model_source(path_);
    DISCO_CHECK(m.key == key_, "model file '", path_, "' changed since the session was made");
    import_seconds_ += m.seconds;
    graph_ = std::move(m.graph);
  }
  return *graph_;
}

void Session::make_variant(CompiledModel compiled, Variant &v) {
  v.compiled = std::move(compiled);
  v.compiled.profile.import_s = import_seconds_;
  install_backend_runtimes();
  auto exec = std::make_unique<Executor>(v.compiled.plan, v.compiled.dir);
  exec->set_memory_limit(memory_limit(opts_.max_memory));
  if (threads_ > 0) exec->set_num_threads(threads_);
  if (profiling_) exec->set_profiling(true);
  v.idle.push_back(exec.get());
  v.last = exec.get();
  v.execs.push_back(std::move(exec));
}

Executor *Session::take_executor(Variant &v) {
  if (v.idle.empty()) {
    // All busy with other threads' runs: another with its own run state (clone() shares the weights).
    v.execs.push_back(v.execs.front()->clone());
    return v.execs.back().get();
  }
  Executor *e = v.idle.back();
  v.idle.pop_back();
  return e;
}

Session::~Session() = default;

Session Session::from_onnx(const std::string &path, CompileOptions opts) {
  // A warm start: the file unchanged since its key was remembered, and its compile in the
  // cache. Neither read nor parsed (driver/source_index.h).
  const std::string root = cache_root(opts);
  const std::string name = model_name_of(path);
  if (opts.use_cache && !opts.keep_objects) {
    const std::string key = remembered_content_key(root, path);
    if (!key.empty())
      if (auto hit = find_cached(name, variant_cache_key(key, ContentHash().hex()), opts)) {
        if (opts.progress) opts.progress("compile cache: " + path + " unchanged, not parsed");
        return Session(path, name, key, std::move(opts), std::move(*hit));
      }
  }
  if (opts.progress) opts.progress("parsing " + path);
  ModelSource m = load_model_source(path);
  if (opts.use_cache) remember_content_key(root, path, m.key);
  Session s(std::move(m.graph), m.name, m.key, std::move(opts));
  s.path_ = path;
  s.import_seconds_ = m.seconds;
  for (auto &[k, v] : s.variants_) v->compiled.profile.import_s = m.seconds;
  return s;
}

std::optional<Graph> Session::graph_with_values(const std::vector<TensorData> *values, std::string *values_hash) {
  Graph g = graph();
  ContentHash hash;
  std::vector<int> kept;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (!value_inputs_.count(i)) {
      kept.push_back(g.inputs[i]);
      continue;
    }
    if (!values) return std::nullopt;  // values come with the first run
    const TensorData &t = values->at(i);
    Value &v = g.value(g.inputs[i]);
    v.constant = t;
    v.shape = Shape(t.shape.begin(), t.shape.end());
    hash.add(&i, sizeof i).add(t.shape.data(), t.shape.size() * sizeof(int64_t)).add(t.data(), t.num_bytes());
  }
  g.inputs = kept;
  if (values_hash) *values_hash = hash.hex();
  return g;
}

bool Session::bind_run_time_if_inputs(const std::vector<TensorData> &values) {
  std::optional<Graph> g = graph_with_values(&values, nullptr);
  if (!g) return false;
  ShapeStore store;
  try {
    infer_shapes(*g, store);
  } catch (const std::exception &) {
    return false;
  }
  const size_t before = value_inputs_.size();
  for (const Node &n : g->nodes)
    if (n.domain == "disco" && n.op_type == "IfSelect")
      for (int64_t id : AttrReader(n.attrs, n.where()).get_ints("cond_inputs"))
        if (int pos = input_position(graph(), static_cast<int>(id)); pos >= 0)
          value_inputs_.insert(static_cast<size_t>(pos));
  return value_inputs_.size() != before;
}

std::unique_ptr<Session::Variant> Session::compile_variant(const std::vector<TensorData> *values) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    std::string values_hash;
    std::optional<Graph> bound = graph_with_values(values, &values_hash);
    if (!bound) return nullptr;
    Graph g = std::move(*bound);
    try {
      int before = compile_count();
      auto v = std::make_unique<Variant>();
      CompiledModel compiled = compile_graph(std::move(g), name_, variant_cache_key(key_, values_hash), opts_);
      compiles_ += compile_count() - before;
      make_variant(std::move(compiled), *v);
      return v;
    } catch (const ValueRequired &e) {
      // Bind the graph inputs the value comes from; constant folding does the rest.
      size_t before = value_inputs_.size();
      for (int id : e.from_inputs)
        if (int pos = input_position(graph(), id); pos >= 0) value_inputs_.insert(static_cast<size_t>(pos));
      if (value_inputs_.size() == before) throw;  // computed from data inside the graph: truly data-dependent
    }
  }
  fail("model '", name_, "': too many inputs whose values are needed at compile time");
}

Session::Variant &Session::variant_for(const std::vector<TensorData> &inputs) {
  if (value_inputs_.empty()) return *variants_.at("");
  std::string key;
  for (size_t i : value_inputs_) {
    const TensorData &t = inputs[i];
    const InputSpec &spec = inputs_[i];
    DISCO_CHECK(t.dtype == spec.dtype, "input '", spec.name, "' has dtype ", dtype_name(t.dtype), ", expected ",
                dtype_name(spec.dtype));
    DISCO_CHECK(t.shape.size() == spec.shape.size(), "input '", spec.name, "' has rank ", t.shape.size(),
                ", expected ", spec.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d)
      DISCO_CHECK(!spec.shape[d].is_const() || spec.shape[d].as_const() == t.shape[d], "input '", spec.name,
                  "' dim ", d, " is ", t.shape[d], ", expected ", spec.shape[d].as_const(), " (fixed by the model)");
    key += std::to_string(i) + ":" + std::string(reinterpret_cast<const char *>(t.shape.data()), t.shape.size() * 8) +
           std::string(reinterpret_cast<const char *>(t.data()), t.num_bytes()) + ";";
  }
  auto it = variants_.find(key);
  if (it != variants_.end()) return *it->second;
  auto v = compile_variant(&inputs);
  return *(variants_[key] = std::move(v));
}

std::vector<TensorData> Session::run(const std::vector<TensorData> &inputs) {
  std::vector<TensorData> outputs;
  run(inputs, outputs);
  return outputs;
}

void Session::set_profiling(bool on) {
  std::lock_guard<std::mutex> lock(*mu_);
  profiling_ = on;
  for (auto &[k, v] : variants_)
    for (auto &e : v->execs) e->set_profiling(on);
}

std::vector<Executor::StepTime> Session::profile() const {
  std::lock_guard<std::mutex> lock(*mu_);
  DISCO_CHECK(last_, "model '", name_, "' has not run yet");
  // Summed over the compile's executors: runs from several threads each used one.
  std::vector<Executor::StepTime> out = last_->execs.front()->profile();
  for (size_t i = 1; i < last_->execs.size(); ++i) {
    const std::vector<Executor::StepTime> more = last_->execs[i]->profile();
    for (size_t s = 0; s < out.size() && s < more.size(); ++s) out[s].ms += more[s].ms;
  }
  return out;
}

void Session::run(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs) {
  try {
    run_once(inputs, outputs);
  } catch (const Error &) {
    // An If whose condition comes from inputs runs both branches
    // (lowering/control_flow.h), and a check in the branch not taken can
    // fail (a Reshape of an empty cache on a stream's first chunk). Compile
    // the condition's inputs in, so that only the taken branch runs, and
    // run again; anything else fails as it did.
    {
      std::lock_guard<std::mutex> lock(*mu_);
      if (!bind_run_time_if_inputs(inputs)) throw;
    }
    run_once(inputs, outputs);
  }
}

void Session::run_once(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs) {
  DISCO_CHECK(inputs.size() == inputs_.size(), "model '", name_, "' takes ", inputs_.size(), " inputs, got ",
              inputs.size());
  Variant *v = nullptr;
  Executor *exec = nullptr;
  std::set<size_t> value_inputs;
  {
    std::lock_guard<std::mutex> lock(*mu_);
    size_t before = value_inputs_.size();
    v = &variant_for(inputs);
    // A compile at run time can discover more value inputs; the key must cover them.
    if (value_inputs_.size() != before) v = &variant_for(inputs);
    last_ = v;
    exec = take_executor(*v);
    v->last = exec;
    value_inputs = value_inputs_;
  }
  // The executor goes back to the pool however the run ends.
  struct GiveBack {
    std::mutex &mu;
    Variant &v;
    Executor *exec;
    ~GiveBack() {
      std::lock_guard<std::mutex> lock(mu);
      v.idle.push_back(exec);
    }
  } give_back{*mu_, *v, exec};
  if (value_inputs.empty()) return exec->run(inputs, outputs);
  std::vector<TensorData> rest;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!value_inputs.count(i)) rest.push_back(inputs[i]);
  exec->run(rest, outputs);
}

const CompiledModel &Session::last_compile() const {
  std::lock_guard<std::mutex> lock(*mu_);
  DISCO_CHECK(last_, "model '", name_, "' compiles on its first run (some inputs' values are compiled in)");
  return last_->compiled;
}

const SymbolValues &Session::last_symbols() const {
  std::lock_guard<std::mutex> lock(*mu_);
  DISCO_CHECK(last_, "model '", name_, "' has not run yet");
  return last_->last->last_symbols();
}

void Session::set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(*mu_);
  threads_ = n;
  for (auto &[k, v] : variants_)
    for (auto &e : v->execs) e->set_num_threads(n);
}

}  // namespace disco
