#include "python/model.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "frontend/content_hash.h"
#include "frontend/errors.h"
#include "frontend/onnx_importer.h"
#include "python/module_cache.h"

namespace disco::python {

Model::Model(std::string path, std::string bytes, std::string name, ModelOptions opts)
    : path_(std::move(path)), bytes_(std::move(bytes)), name_(std::move(name)), opts_(std::move(opts)) {}

CompileOptions Model::compile_options() const {
  CompileOptions co;
  co.target = opts_.target;
  if (!opts_.backends.empty()) co.backends = opts_.backends;
  select_gpu_target(co, !opts_.backends.empty());  // as disco run: opencl, cuda pick their backend
  co.static_shapes = opts_.static_shapes;
  co.hints = opts_.hints;
  co.use_cache = opts_.use_cache;
  co.compile_workers = opts_.compile_jobs;
  co.max_memory = opts_.max_memory;
  co.progress = opts_.progress;
  if (co.compile_workers < 0) fail("compile_jobs must be 0 (one per core) or more, got ", co.compile_workers);
  if (opts_.threads < 0) fail("threads must be 0 (all cores) or more, got ", opts_.threads);
  co.cache_dir = module_cache_root(co);
  return co;
}

std::unique_ptr<Model> Model::from_file(const std::string &path, ModelOptions opts) {
  std::unique_ptr<Model> m(new Model(path, "", model_name_of(path), std::move(opts)));
  m->session_ = std::make_unique<Session>(Session::from_onnx(path, m->compile_options()));
  if (m->opts_.threads > 0) m->session_->set_num_threads(m->opts_.threads);
  return m;
}

std::unique_ptr<Model> Model::from_bytes(std::string bytes, const std::string &name, ModelOptions opts) {
  DISCO_CHECK(!name.empty(), "a model given as bytes needs a name");
  std::unique_ptr<Model> m(new Model("", std::move(bytes), name, std::move(opts)));
  // As load_model_source keys a file: by its bytes. External data would be
  // looked for in the current folder; exporters write it inline below 2 GB.
  Graph g = load_onnx_bytes(m->bytes_, ".", "model '" + name + "' (bytes)");
  const std::string key = ContentHash().add(m->bytes_).hex();
  m->session_ = std::make_unique<Session>(std::move(g), name, key, m->compile_options());
  if (m->opts_.threads > 0) m->session_->set_num_threads(m->opts_.threads);
  return m;
}

std::vector<ValueInfo> Model::input_info() const {
  std::vector<ValueInfo> out;
  for (const InputSpec &in : session_->inputs()) out.push_back({in.name, in.dtype, in.shape, true});
  return out;
}

std::vector<ValueInfo> Model::output_info() const {
  std::vector<ValueInfo> out;
  const std::vector<std::string> &names = session_->output_names();
  if (!session_->value_inputs().empty()) {
    // Compiled at the first run, per values of some inputs: the outputs' dtypes and dims come with it.
    for (const auto &n : names) out.push_back({n, DType::Undefined, {}, false});
    return out;
  }
  const Plan &plan = session_->last_compile().plan;
  for (size_t i = 0; i < names.size(); ++i) {
    const PlanBuffer &b = plan.buffers.at(plan.output_buffers.at(i));
    out.push_back({names[i], b.dtype, b.shape, true});
  }
  return out;
}

namespace {

// A private folder that is removed with everything in it when this goes.
struct TempDir {
  std::string path;
  TempDir() {
    const char *tmp = std::getenv("TMPDIR");
    path = std::string(tmp && *tmp ? tmp : "/tmp") + "/disco-export-XXXXXX";
    DISCO_CHECK(mkdtemp(path.data()), "cannot create a temporary folder for the model's ONNX file");
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

aot::AotResult Model::export_library(const std::string &out_dir, const std::string &name) const {
  // disco compile has no --static: its libraries keep every dim symbolic.
  DISCO_CHECK(opts_.static_shapes.empty(), "export: model '", name_,
              "' was compiled with static shapes, which AOT libraries do not take (disco compile has no --static); "
              "compile it without `static` to export it");
  aot::AotOptions a;
  a.out_dir = out_dir.empty() ? "." : out_dir;
  a.name = name;
  a.target = opts_.target;
  if (!opts_.backends.empty()) a.backends = opts_.backends;
  a.hints = opts_.hints;
  a.compile_workers = opts_.compile_jobs;
  a.progress = opts_.progress;
  if (!path_.empty()) {
    a.model = path_;
    return aot::compile_aot(a);
  }
  TempDir tmp;
  a.model = tmp.path + "/" + name_ + ".onnx";
  {
    std::ofstream f(a.model, std::ios::binary);
    f.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
    DISCO_CHECK(f.good(), "cannot write the model's ONNX bytes to '", a.model, "'");
  }
  return aot::compile_aot(a);
}

}  // namespace disco::python
