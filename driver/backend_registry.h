// The registry of backends, by name: the driver's one list of what exists.
// Adding a backend is a folder under targets/ and one line in
// backend_registry.cc; the host backend is always present and always last.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "targets/backend.h"

namespace disco {

// What the user says to particular backends; each option is part of the compile cache's key.
struct BackendOptions {
  // vitis_ai: calibration samples, each FILE.npy (a one-input model) or INPUT=FILE.npy; empty: seeded noise.
  std::vector<std::string> calibration_samples;
};

std::unique_ptr<Backend> make_backend(const std::string &name, const BackendOptions &opts = {});
std::vector<std::string> backend_names();
// Backends in the user's priority order (e.g. "onednn,host"); host is appended
// when missing, because it is the fallback for everything.
std::vector<std::unique_ptr<Backend>> make_backends(const std::vector<std::string> &names,
                                                    const BackendOptions &opts = {});
// Each backend's Backend::prepare_graph, in priority order, as compiles and
// `disco inspect` run them before partitioning; returns the nodes rewritten.
int prepare_graph_for(const std::vector<std::unique_ptr<Backend>> &backends, Graph &g);
// Registers every backend's runtime glue with ExternKernelRegistry::global(). Idempotent.
void install_backend_runtimes();

}  // namespace disco
