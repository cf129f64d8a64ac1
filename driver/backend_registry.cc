// The registry of backends. Adding a backend is one folder under targets/
// and one line here; the host backend stays last, the fallback for all.
#include "driver/backend_registry.h"

#include <mutex>

#include "frontend/errors.h"
#include "targets/cublas/cublas_backend.h"
#include "targets/example/example_backend.h"
#include "targets/gpu/gpu_backend.h"
#include "targets/host/host_backend.h"
#include "targets/onednn/onednn_backend.h"
#include "targets/onednn/onednn_kernels.h"
#include "targets/vitis_ai/vitis_ai_backend.h"

namespace disco {

namespace {

struct BackendEntry {
  const char *name;
  std::unique_ptr<Backend> (*make)(const BackendOptions &);
  void (*install_runtime)();  // registers the backend's ExternKernels; null when it has none
};

const std::vector<BackendEntry> &entries() {
  static const std::vector<BackendEntry> list = {
      {"example", [](const BackendOptions &) { return make_example_backend(); }, install_example_runtime},
      {"onednn", [](const BackendOptions &) { return make_onednn_backend(); }, install_onednn_runtime},
      {"cublas", [](const BackendOptions &) { return make_cublas_backend(); }, install_cublas_runtime},
      {"opencl", [](const BackendOptions &) { return make_opencl_backend(); }, nullptr},
      {"cuda", [](const BackendOptions &) { return make_cuda_backend(); }, nullptr},
      {"vitis_ai", [](const BackendOptions &o) { return make_vitis_ai_backend(o.calibration_samples); },
       install_vitis_ai_runtime},
      {"host", [](const BackendOptions &) { return make_host_backend(); }, nullptr},
  };
  return list;
}

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto &e : entries()) names.push_back(e.name);
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string &name, const BackendOptions &opts) {
  for (const auto &e : entries())
    if (name == e.name) return e.make(opts);
  std::string known;
  for (const auto &e : entries()) known += std::string(known.empty() ? "" : ", ") + e.name;
  fail("unknown backend '", name, "' (known: ", known, ")");
}

std::vector<std::unique_ptr<Backend>> make_backends(const std::vector<std::string> &names,
                                                    const BackendOptions &opts) {
  std::vector<std::unique_ptr<Backend>> out;
  bool has_host = false;
  for (const auto &n : names) {
    for (const auto &b : out) DISCO_CHECK(b->name() != n, "backend '", n, "' is listed twice");
    DISCO_CHECK(!has_host, "backend '", n, "' comes after host, which takes everything; list host last");
    out.push_back(make_backend(n, opts));
    has_host = has_host || n == "host";
  }
  if (!has_host) out.push_back(make_host_backend());
  return out;
}

int prepare_graph_for(const std::vector<std::unique_ptr<Backend>> &backends, Graph &g) {
  int rewritten = 0;
  for (const auto &b : backends) rewritten += b->prepare_graph(g);
  return rewritten;
}

void install_backend_runtimes() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const auto &e : entries())
      if (e.install_runtime) e.install_runtime();
  });
}

}  // namespace disco
