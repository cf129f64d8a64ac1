// Runs one compiled plan (a `disco run` cache entry: plan.txt, kernels.so,
// constants.bin) on the GPU machine for benchmarks/gpu_check.sh. It links the
// runtime and the cuBLAS glue only: no Halide, no ONNX, no compiler, so that
// it is small enough to carry to a machine that builds nothing.
//
//   gpu_check_runner PLAN_DIR [--runs N] [--rtol X] [--atol X] [--profile] IN.npy REF.npy [...]
//
// Prints one line per input set, tab-separated:
//   ok|mismatch  SHAPE  MEDIAN_MS  WORST  MAX_ABS      (WORST <= 1: within rtol/atol)
//   error        SHAPE  MESSAGE
// and first, for a plan with cuBLAS steps, "device\tDESCRIPTION" or
// "no-gpu\tMESSAGE". With --profile, each set's timed runs are also split by
// plan step, one "step\tSHAPE\tMS_PER_RUN\tLABEL" line each, slowest first
// (gpu_check.sh skips them). A step's time is its wall time on the host: a
// GPU step that does not wait for its kernel passes its time to the next one
// that waits.
// Exit status: 0 all ok, 1 a mismatch, 2 an error, 3 no GPU.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/errors.h"
#include "frontend/tensor_compare.h"
#include "runtime/executor.h"
#include "runtime/npy.h"
#include "targets/cublas/cublas_backend.h"
#include "targets/cublas/cuda_api.h"

// The static libstdc++ of GCC 12 on glibc 2.36 refers to arc4random (for
// std::random_device, which nothing here uses), and that reference alone
// would make the runner need glibc 2.36 on the GPU machine. This definition
// satisfies it locally; it is never called.
extern "C" uint32_t arc4random(void) {
  static uint32_t state = 0x9e3779b9u;
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

namespace {

std::string shape_text(const std::vector<int64_t> &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

int usage() {
  std::fprintf(stderr, "usage: gpu_check_runner PLAN_DIR [--runs N] [--rtol X] [--atol X] [--profile] IN.npy REF.npy [...]\n");
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  if (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    usage();
    return 0;
  }
  const std::string dir = argv[1];
  int runs = 20;
  double rtol = 1e-3, atol = 1e-4;
  bool profile = false;
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--runs" || a == "--rtol" || a == "--atol") && i + 1 < argc) {
      const double v = std::atof(argv[++i]);
      if (a == "--runs") runs = std::max(1, static_cast<int>(v));
      if (a == "--rtol") rtol = v;
      if (a == "--atol") atol = v;
    } else if (a == "--profile") {
      profile = true;
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty() || files.size() % 2 != 0) return usage();

  std::unique_ptr<disco::Executor> exec;
  try {
    disco::Plan plan = disco::Plan::load(dir + "/plan.txt");
    const bool uses_cublas = std::any_of(plan.steps.begin(), plan.steps.end(),
                                         [](const disco::PlanStep &s) { return s.extern_call.rfind("cublas.", 0) == 0; });
    if (uses_cublas) {
      try {
        std::printf("device\t%s\n", one_line(disco::CudaDevice::shared().description()).c_str());
      } catch (const disco::Error &e) {
        std::printf("no-gpu\t%s\n", one_line(e.what()).c_str());
        return 3;
      }
    }
    disco::install_cublas_runtime();
    exec = std::make_unique<disco::Executor>(std::move(plan), dir);
  } catch (const std::exception &e) {
    std::printf("error\t-\t%s\n", one_line(e.what()).c_str());
    return 2;
  }

  int status = 0;
  for (size_t i = 0; i < files.size(); i += 2) {
    std::string shape = "-";
    try {
      std::vector<disco::TensorData> inputs{disco::read_npy(files[i])};
      const disco::TensorData want = disco::read_npy(files[i + 1]);
      shape = shape_text(inputs[0].shape);
      std::vector<disco::TensorData> outputs = exec->run(inputs);
      const disco::Closeness c = disco::closeness(outputs.at(0), want, rtol, atol);
      exec->run(inputs, outputs);  // warm-up: first-run uploads and allocations are not timed
      std::vector<double> ms;
      exec->set_profiling(profile);  // a fresh profile per input set
      for (int r = 0; r < runs; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        exec->run(inputs, outputs);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      const bool ok = c.worst <= 1.0;
      std::printf("%s\t%s\t%.4f\t%.3g\t%.3g\n", ok ? "ok" : "mismatch", shape.c_str(), ms[ms.size() / 2], c.worst,
                  c.max_abs);
      if (!ok) status = std::max(status, 1);
      if (profile) {
        std::vector<disco::Executor::StepTime> steps = exec->profile();
        exec->set_profiling(false);
        std::sort(steps.begin(), steps.end(), [](const auto &a, const auto &b) { return a.ms > b.ms; });
        for (const auto &st : steps)
          std::printf("step\t%s\t%.4f\t%s\n", shape.c_str(), st.ms / runs, one_line(st.label).c_str());
      }
    } catch (const std::exception &e) {
      std::printf("error\t%s\t%s\n", shape.c_str(), one_line(e.what()).c_str());
      status = 2;
    }
    std::fflush(stdout);
  }
  return status;
}
