// `disco run --target opencl` and `--target cuda` as a user runs them: OpenCL
// compiles in the disco process and runs in a disco-exec child (PoCL here);
// CUDA without a GPU fails with a clear message and exit code 1, no abort.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/support/command.h"
#include "tests/support/opencl_device.h"

namespace disco {
namespace {

using Result = testing::CommandResult;

// Each call compiles afresh (its own cache folder): the tests read the compile's progress lines.
Result disco(const std::string &args) {
  return testing::run_command("DISCO_CACHE_DIR=" + testing::make_temp_dir("gpu-cli-test") + " " +
                              std::string(DISCO_BINARY) + " " + args);
}

const std::string kModel = std::string(DISCO_SOURCE_DIR) + "/examples/models/layernorm_softmax.onnx";
const std::string kRefs = std::string(DISCO_SOURCE_DIR) + "/tests/references/layernorm_softmax.";

TEST(GpuCli, OpenclRunsTwoShapesInAChildProcessAndMatchesPyTorch) {
  if (!testing::has_pocl_device()) GTEST_SKIP() << "PoCL is not installed (tools/setup.sh installs pocl-opencl-icd)";
  std::string args = "run " + kModel + " --target opencl --rtol 1e-3 --verbose";
  for (const char *k : {"1", "3"})
    args += " --input x=" + kRefs + k + ".input.npy --expect y=" + kRefs + k + ".output.npy";
  Result r = disco(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[opencl]"), std::string::npos) << "the opencl backend compiles the region:\n" << r.output;
  EXPECT_NE(r.output.find("gpu-stitch"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
}

TEST(GpuCli, CudaWithoutAGpuIsAnErrorNotACrash) {
  if (std::FILE *f = std::fopen("/proc/driver/nvidia/version", "r")) {
    std::fclose(f);
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  }
  Result r = disco("run " + kModel + " --target cuda86 --input x=" + kRefs + "1.input.npy");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no usable GPU"), std::string::npos) << r.output;
}

TEST(GpuCli, UnknownGpuTargetNamesAreRejected) {
  Result r = disco("run " + kModel + " --target cuda99 --shape x=1x2x768");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown target 'cuda99'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace disco
