#include "tools/compile_flags.h"

#include <cstdlib>

#include "targets/gpu/gpu_target.h"

namespace disco {

const std::set<std::string> &compile_option_names() {
  static const std::set<std::string> names = {"target", "targets", "static", "hint", "calibrate", "compile-jobs", "max-memory"};
  return names;
}

const std::set<std::string> &compile_flag_names() {
  static const std::set<std::string> names = {"no-cache"};
  return names;
}

const char *kCompileFlagsHelp =
    "  --target T              host (default), opencl, cuda (cuda70/80/86) or a Halide target string\n"
    "  --targets B1,B2,...     backends in priority order (default: onednn,host); e.g. host alone\n"
    "  --static NAME=2x128x768 compile input NAME for this one shape only (a static compile)\n"
    "  --hint SYM=VALUE        a likely value of a symbolic dim (e.g. seq=128): kernels get a branch\n"
    "                          specialized for it, and keep the generic one\n"
    "  --calibrate FILE.npy    a calibration sample for vitis_ai (repeatable; INPUT=FILE.npy for several inputs)\n"
    "  --compile-jobs N        Halide kernels compiled at once (default: one per core)\n"
    "  --max-memory SIZE       the most one value (and the intermediate values together) may take, e.g. 8G\n"
    "                          (default: $DISCO_MAX_MEMORY, else the physical memory)\n"
    "  --no-cache              compile even if the compile cache has this model\n";

CompileOptions compile_options_from(const CliArgs &args) {
  CompileOptions opts;
  opts.target = args.get("target", "host");
  if (!args.all("targets").empty()) opts.backends = parse_backend_list(args.get("targets", ""));
  opts.backend_options.calibration_samples = args.all("calibrate");  // vitis_ai; part of the cache key
  select_gpu_target(opts, !args.all("targets").empty());  // opencl, cuda: GPU backend and Halide target
  for (const auto &text : args.all("static")) {
    auto [name, dims] = split_assignment(text, "--static");
    opts.static_shapes[name] = parse_shape(dims, "--static " + name);
  }
  for (const auto &text : args.all("hint")) {
    auto [sym, value] = split_assignment(text, "--hint");
    char *end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0') throw UsageError("--hint " + text + ": the value must be an integer");
    opts.hints[sym] = v;
  }
  opts.use_cache = !args.flag("no-cache");
  opts.compile_workers = args.get_int("compile-jobs", 0);
  if (opts.compile_workers < 0) throw UsageError("--compile-jobs must be 0 (one per core) or more");
  opts.max_memory = args.get_byte_size("max-memory", 0);
  return opts;
}

}  // namespace disco
