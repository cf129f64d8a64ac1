// Every benchmark model compiled once for `--target opencl` runs on PoCL (a
// CPU OpenCL device) in a disco-exec child process and matches PyTorch's
// outputs (rtol 1e-3) at the three reference shapes of tests/references.
#include <gtest/gtest.h>

#include <cstdio>

#include "frontend/tensor_compare.h"
#include "runtime/child_executor.h"
#include "runtime/npy.h"
#include "targets/gpu/gpu_target.h"
#include "driver/session.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"
#include "tests/support/opencl_device.h"

namespace disco {
namespace {

using testing::reference_name;  // convnet_bn uses convnet's references

class OpenclModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenclModelTest, MatchesPyTorchAtThreeShapesWithOneCompile) {
  const std::string name = GetParam();
  const std::string path = testing::find_model(name);
  if (path.empty()) GTEST_SKIP() << name << ".onnx is neither in ../shared/models nor in examples/models";
  if (!testing::has_pocl_device()) GTEST_SKIP() << "PoCL is not installed (tools/setup.sh installs pocl-opencl-icd)";
  CompileOptions opts;
  opts.target = "opencl";
  select_gpu_target(opts, /*backends_given=*/false);
  Session s = Session::from_onnx(path, opts);
  const CompiledModel &cm = s.last_compile();
  // The kernels are OpenCL kernels, so they run in the child process.
  ASSERT_TRUE(plan_needs_child_process(cm.plan, cm.dir)) << name << ": the kernel library has no OpenCL runtime";
  for (const auto &step : cm.plan.steps) EXPECT_TRUE(step.extern_call.empty()) << step.extern_call;

  const std::string ref = reference_name(name);
  for (int k = 1; k <= 3; ++k) {
    const std::string base = testing::references_dir() + "/" + ref + "." + std::to_string(k);
    TensorData x = read_npy(base + ".input.npy");
    std::string shape;
    for (auto d : x.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    auto got = s.run({x});
    const TensorData want = read_npy(base + ".output.npy");
    ASSERT_EQ(got[0].shape, want.shape) << name << " at " << shape;
    const Closeness c = closeness(got[0], want, 1e-3, 1e-5);
    EXPECT_LE(c.worst, 1.0) << name << " at " << shape << ": outside rtol 1e-3, atol 1e-5";
    std::printf("  %s at %s: max abs error %.3g\n", name.c_str(), shape.c_str(), c.max_abs);
  }
  EXPECT_LE(s.compiles(), 1) << "one compile must serve every shape";
}

INSTANTIATE_TEST_SUITE_P(Models, OpenclModelTest,
                         ::testing::ValuesIn(testing::benchmark_models()));

}  // namespace
}  // namespace disco
