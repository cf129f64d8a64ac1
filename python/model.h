// The Model of the Python module: a Session (driver/session.h) plus what
// Model.export needs, the model's source and the options it was compiled
// with. Python-free: python/disco_module.cc converts arrays and arguments.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "driver/aot/aot_compile.h"
#include "driver/session.h"

namespace disco::python {

// disco.compile()'s options: those of `disco run` (and `disco compile` for export).
struct ModelOptions {
  std::string target = "host";        // --target
  std::vector<std::string> backends;  // --targets; empty: the default of run (onednn,host) or of export (host)
  std::map<std::string, int64_t> hints;                         // --hint SYM=VALUE
  std::map<std::string, std::vector<int64_t>> static_shapes;  // --static NAME=SHAPE
  int threads = 0;                    // --threads; 0: all cores
  bool use_cache = true;              // --no-cache
  int compile_jobs = 0;               // --compile-jobs
  int64_t max_memory = 0;             // --max-memory
  std::function<void(const std::string &)> progress;  // --verbose's lines
};

// A value's name, dtype and dims as declared: constants, or symbolic dims' text ("batch", "2*seq").
struct ValueInfo {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  bool known = true;  // false for outputs of a model that compiles at its first run
};

class Model {
 public:
  // An ONNX file.
  static std::unique_ptr<Model> from_file(const std::string &path, ModelOptions opts);
  // An ONNX file's bytes; `name` stands for the file stem (cache entries and messages).
  static std::unique_ptr<Model> from_bytes(std::string bytes, const std::string &name, ModelOptions opts);

  const std::string &name() const { return name_; }
  const std::vector<InputSpec> &inputs() const { return session_->inputs(); }
  std::vector<ValueInfo> input_info() const;
  std::vector<ValueInfo> output_info() const;
  const std::vector<std::string> &output_names() const { return session_->output_names(); }
  int compiles() const { return session_->compiles(); }
  // May be called from several threads at once (Session::run).
  std::vector<TensorData> run(const std::vector<TensorData> &inputs) { return session_->run(inputs); }
  // What `disco compile MODEL -o OUT_DIR/NAME` does, with this model's target, backends and hints.
  aot::AotResult export_library(const std::string &out_dir, const std::string &name) const;

 private:
  Model(std::string path, std::string bytes, std::string name, ModelOptions opts);
  CompileOptions compile_options() const;

  std::string path_;   // the ONNX file, or empty for a model given as bytes
  std::string bytes_;  // the ONNX bytes, when not from a file (export writes them to a file)
  std::string name_;
  ModelOptions opts_;
  std::unique_ptr<Session> session_;
};

}  // namespace disco::python
