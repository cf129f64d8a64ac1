// disco: compile, run and inspect dynamic-shape ONNX models.
// OpenMP's threads spin briefly in this program: tools/openmp_short_spin.cc,
// linked into it, sets that up before main (libgomp reads it when it loads).
#include <cstdio>
#include <cstring>
#include <string>

#include "frontend/errors.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace {

const char *kUsage =
    "usage: disco <command> [options]\n"
    "\n"
    "commands:\n"
    "  run MODEL      compile MODEL once (symbolic shapes) and run it on .npy inputs or random data\n"
    "  inspect MODEL  print every value with its symbolic shape, and the shape constraints\n"
    "  compile MODEL -o OUTDIR/NAME\n"
    "                 ahead of time: a static library NAME.a and a C header NAME.h, no libHalide\n"
    "  bench MODEL    compile MODEL once and time repeated runs: latency percentiles, throughput,\n"
    "                 compile time and peak memory\n"
    "\n"
    "Run 'disco <command> --help' for a command's options.\n";

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string verb = argv[1];
  try {
    if (verb == "run") return disco::cmd_run(argc, argv);
    if (verb == "inspect") return disco::cmd_inspect(argc, argv);
    if (verb == "compile") return disco::cmd_compile(argc, argv);
    if (verb == "bench") return disco::cmd_bench(argc, argv);
    std::fprintf(stderr, "disco: unknown command '%s'\n\n%s", verb.c_str(), kUsage);
    return 2;
  } catch (const disco::UsageError &e) {
    std::fprintf(stderr, "disco %s: %s (see 'disco %s --help')\n", verb.c_str(), e.what(), verb.c_str());
    return 2;
  } catch (const disco::Error &e) {
    std::fprintf(stderr, "disco: error: %s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "disco: error: %s\n", e.what());
    return 1;
  }
}
