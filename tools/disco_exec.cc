// disco-exec: runs a compiled plan with the runtime alone, in a process that
// never loads libHalide (OpenCL on PoCL needs that; runtime/child_executor.h).
//
//   disco-exec PLAN_DIR [--input FILE.npy ...] [--output-dir DIR]
//       runs PLAN_DIR/plan.txt once, inputs in the plan's order;
//   disco-exec --serve PLAN_FILE LIB_DIR WORK_DIR
//       the child side of the Executor: commands on stdin, replies on stdout.
// OpenMP's threads spin briefly in this program: tools/openmp_short_spin.cc,
// linked into it, sets that up before main (libgomp reads it when it loads).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/errors.h"
#include "runtime/child_executor.h"
#include "runtime/executor.h"
#include "runtime/npy.h"

int main(int argc, char **argv) {
  using namespace disco;
  if (argc == 5 && std::strcmp(argv[1], "--serve") == 0) {
    // Replies get their own descriptor; anything a library prints goes to stderr.
    const int reply_fd = dup(1);
    dup2(2, 1);
    return serve_plan(argv[2], argv[3], argv[4], reply_fd);
  }
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs("usage: disco-exec PLAN_DIR [--input FILE.npy ...] [--output-dir DIR]\n", stderr);
    return 2;
  }
  try {
    const std::string dir = argv[1];
    std::vector<TensorData> inputs, outputs;
    std::string out_dir;
    for (int i = 2; i + 1 < argc; i += 2) {
      if (std::strcmp(argv[i], "--input") == 0)
        inputs.push_back(read_npy(argv[i + 1]));
      else if (std::strcmp(argv[i], "--output-dir") == 0)
        out_dir = argv[i + 1];
      else
        throw Error(std::string("unknown option ") + argv[i]);
    }
    Plan plan = Plan::load(dir + "/plan.txt");
    Executor exec(plan, dir, /*allow_child=*/false);
    exec.run(inputs, outputs);
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::printf("%s:", plan.output_names[i].c_str());
      for (int64_t d : outputs[i].shape) std::printf(" %lld", static_cast<long long>(d));
      std::printf("\n");
      if (!out_dir.empty()) write_npy(out_dir + "/out" + std::to_string(i) + ".npy", outputs[i]);
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "disco-exec: error: %s\n", e.what());
    return 1;
  }
}
