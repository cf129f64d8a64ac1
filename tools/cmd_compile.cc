// disco compile: ahead-of-time compile a model into OUTDIR/NAME.a + NAME.h.
#include <cstdio>

#include "frontend/errors.h"
#include "driver/aot/aot_compile.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/progress_display.h"

namespace disco {

namespace {

const char *kCompileHelp =
    "usage: disco compile MODEL.onnx -o OUTDIR/NAME [options]\n"
    "\n"
    "Compiles MODEL ahead of time, with its symbolic dims, into a static library and a C header:\n"
    "  OUTDIR/NAME.a  the Halide kernels, Halide's runtime and a generated C driver (shape binding,\n"
    "                 checks, buffer sizes, kernel calls); link with -lpthread -ldl -lm, no libHalide\n"
    "  OUTDIR/NAME.h  int NAME_run(const halide_buffer_t *in..., halide_buffer_t *out...),\n"
    "                 NAME_output_shapes(...), NAME_last_error(), and the inputs' and outputs' names,\n"
    "                 dtypes and symbolic dims\n"
    "Two runs of the same command write byte-identical files.\n"
    "\n"
    "  -o, --output OUTDIR/NAME  where to write; NAME must be a C identifier (it prefixes every symbol)\n"
    "  --target T                host (default: this machine) or a Halide target string, e.g.\n"
    "                            x86-64-linux-avx2, x86-64-linux-avx512; cuda70, cuda80, cuda86 (CUDA\n"
    "                            kernels, run where an NVIDIA GPU is present), opencl\n"
    "  --targets B1,B2,...       backends in priority order (default host): host, onednn and example go\n"
    "                            into AOT libraries (oneDNN regions link libdnnl: see NAME.pc)\n"
    "  --hint SYM=VALUE          a likely value of a symbolic dim: kernels get a specialized branch\n"
    "  --compile-jobs N          kernels compiled at once (default: one per core); any N writes the same bytes\n"
    "  --quiet                   print only errors\n";

}  // namespace

int cmd_compile(int argc, char **argv) {
  std::vector<std::string> words(argv, argv + argc);
  for (auto &w : words)
    if (w == "-o") w = "--output";
  std::vector<char *> cargv;
  for (auto &w : words) cargv.push_back(w.data());
  CliArgs args(argc, cargv.data(), 2, {"help", "quiet"}, {"output", "target", "targets", "hint", "compile-jobs"});
  if (args.flag("help")) {
    std::fputs(kCompileHelp, stdout);
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("give exactly one MODEL.onnx");
  const std::string out = args.get("output", "");
  if (out.empty()) throw UsageError("give -o OUTDIR/NAME");
  aot::AotOptions opts;
  opts.model = args.positional()[0];
  const size_t slash = out.find_last_of('/');
  opts.out_dir = slash == std::string::npos ? "." : out.substr(0, slash);
  opts.name = slash == std::string::npos ? out : out.substr(slash + 1);
  opts.target = args.get("target", "host");
  if (auto t = args.get("targets", ""); !t.empty()) opts.backends = parse_backend_list(t);
  for (const auto &h : args.all("hint")) {
    auto [sym, v] = split_assignment(h, "hint");
    try {
      opts.hints[sym] = std::stoll(v);
    } catch (const std::exception &) {
      throw UsageError("--hint " + h + ": the value must be an integer");
    }
  }
  opts.compile_workers = args.get_int("compile-jobs", 0);
  if (opts.compile_workers < 0) throw UsageError("--compile-jobs must be 0 (one per core) or more");
  ProgressDisplay display;  // the kernel bar on a terminal (tools/progress_display.h)
  if (!args.flag("quiet")) {
    opts.progress = [&display](const std::string &line) { display.line("disco compile: " + line); };
    opts.kernel_progress = display.kernel_callback();
  }
  aot::compile_aot(opts);
  display.finish();
  return 0;
}

}  // namespace disco
