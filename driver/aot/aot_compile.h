// `disco compile`: an ONNX model to a static library plus C header
// (OUTDIR/NAME.a, OUTDIR/NAME.h) that runs without libHalide or the disco
// runtime. It reuses the JIT's Plan: the kernels become objects, the plan
// becomes a generated C driver (driver_gen.h), the constants an embedded
// blob, and `ar` packs them deterministically.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "targets/compile_profile.h"

namespace disco::aot {

struct AotOptions {
  std::string model;    // ONNX file
  std::string out_dir;  // created if missing
  std::string name;     // a C identifier: the file stem and symbol prefix
  std::string target = "host";  // Halide target string of the kernels
  std::vector<std::string> backends = {"host"};  // only host: see README.md
  std::map<std::string, int64_t> hints;
  int compile_workers = 0;  // kernels compiled at once; 0: one per core (same bytes for any count)
  std::function<void(const std::string &)> progress;
  std::function<void(size_t done, size_t total)> kernel_progress;  // as CompileOptions::kernel_progress
};

struct AotResult {
  std::string archive, header, pkg_config;  // NAME.a, NAME.h, NAME.pc
  std::vector<std::string> files;  // beside them: the files steps name (AotGlue::file_params), e.g. NAME.r3.xmodel
  int64_t archive_bytes = 0;
  int kernels = 0;
  CompileProfile profile;  // the compile's phases (the driver's and archive's steps aside)
};

// Throws disco::Error naming what is unsupported or which tool failed.
AotResult compile_aot(const AotOptions &opts);

}  // namespace disco::aot
