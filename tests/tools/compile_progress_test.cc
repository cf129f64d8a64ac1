// The structured compile progress the CLI's bar draws from: run_kernel_jobs
// reports (0, N) before the first kernel and (k, N) as each finishes, and a
// real compile passes it through CompileOptions::kernel_progress.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>

#include "driver/compile_model.h"
#include "targets/kernel_jobs.h"
#include "tests/support/command.h"
#include "tests/support/model_files.h"

namespace disco {
namespace {

using Events = std::vector<std::pair<size_t, size_t>>;

TEST(CompileProgress, KernelJobsReportZeroThenEachFinishedKernelOfTheTotal) {
  const std::string dir = testing::make_temp_dir("compile-progress");
  std::vector<KernelJob> jobs;
  for (int i = 0; i < 4; ++i) {
    const std::string path = dir + "/k" + std::to_string(i);
    jobs.push_back({"k" + std::to_string(i), path, [path](CompileProfile &) { std::ofstream(path) << "x"; }});
  }
  Events events;
  CompileProfile profile;
  run_kernel_jobs(jobs, 2, profile, nullptr, [&](size_t done, size_t total) { events.push_back({done, total}); });
  EXPECT_EQ(events, (Events{{0, 4}, {1, 4}, {2, 4}, {3, 4}, {4, 4}}));
  std::filesystem::remove_all(dir);
}

TEST(CompileProgress, ACompileWithoutTheCacheReportsEveryKernelItCompiles) {
  const std::string model = testing::find_model("bert_layer");
  if (model.empty()) GTEST_SKIP() << "bert_layer.onnx needs ../shared/models";
  CompileOptions opts;
  opts.use_cache = false;  // every kernel compiled here, none from the kernel store
  Events events;
  opts.kernel_progress = [&](size_t done, size_t total) { events.push_back({done, total}); };
  const CompiledModel cm = compile_onnx(model, opts);
  const size_t n = static_cast<size_t>(cm.profile.unique_kernels - cm.profile.stored_kernels);
  ASSERT_GE(n, 2u);
  ASSERT_EQ(events.size(), n + 1);
  for (size_t k = 0; k <= n; ++k) EXPECT_EQ(events[k], std::make_pair(k, n));
}

}  // namespace
}  // namespace disco
