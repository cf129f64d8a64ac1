// Halide kernels' parallel loops run on OpenMP's team (runtime/openmp_par_for.h):
// every task runs once, on as many OpenMP threads as asked for, and a failing
// task's code comes back. This test links tools/openmp_short_spin.cc, as
// disco's executables do, and sees its start-up setting take effect.
#include "runtime/openmp_par_for.h"
#include "runtime/openmp_wait_policy.h"
#include "tools/openmp_short_spin.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <set>
#include <vector>

namespace disco {
namespace {

struct Record {
  std::mutex m;
  std::vector<int> runs;
  std::set<int> threads;
  int fail_at = -1;
};

int record_task(void *, int i, uint8_t *closure) {
  auto *r = reinterpret_cast<Record *>(closure);
  std::lock_guard<std::mutex> lock(r->m);
  r->runs.push_back(i);
  r->threads.insert(omp_get_thread_num());
  return i == r->fail_at ? 42 : 0;
}

TEST(OpenmpParFor, RunsEveryTaskOnceOnTheRequestedTeam) {
  for (int threads : {1, 2}) {
    set_openmp_par_for_threads(threads);
    Record r;
    ASSERT_EQ(openmp_do_par_for(nullptr, record_task, 5, 1000, reinterpret_cast<uint8_t *>(&r)), 0);
    std::vector<int> sorted = r.runs;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted.size(), 1000u);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], 5 + i);
    EXPECT_LE(static_cast<int>(r.threads.size()), threads);
    if (threads == 1) {
      EXPECT_EQ(r.threads, std::set<int>{0});
    }
  }
  set_openmp_par_for_threads(0);
}

TEST(OpenmpParFor, AFailingTaskReturnsItsCode) {
  set_openmp_par_for_threads(2);
  Record r;
  r.fail_at = 17;
  EXPECT_EQ(openmp_do_par_for(nullptr, record_task, 0, 100, reinterpret_cast<uint8_t *>(&r)), 42);
  set_openmp_par_for_threads(0);
}

TEST(OpenmpParFor, NestedLoopsRunSeriallyInsideTheTeam) {
  set_openmp_par_for_threads(2);
  std::vector<int> nested(2, -1);
  std::vector<Record> inner(2);
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num();
    nested[t] = openmp_do_par_for(nullptr, record_task, 0, 10, reinterpret_cast<uint8_t *>(&inner[t]));
  }
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(nested[t], 0);
    EXPECT_EQ(inner[t].runs.size(), 10u);
    EXPECT_EQ(inner[t].threads.size(), 1u);  // no second team inside the first
  }
  set_openmp_par_for_threads(0);
}

TEST(OpenmpWaitPolicy, ThreadsSpinBrieflyAtBarriersByDefault) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"))
    GTEST_SKIP() << "the environment chooses OpenMP's wait policy";
  if (!std::getenv("_")) GTEST_SKIP() << "no \"_\" in the environment to carry the setting at start-up";
  EXPECT_TRUE(openmp_short_spin_by_default());
  ::testing::internal::CaptureStderr();
  omp_display_env(1);
  const std::string text = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(text.find("GOMP_SPINCOUNT = '30000'"), std::string::npos) << text;
  EXPECT_NE(std::string(std::getenv("_")), kRecommendedOpenmpSpin) << "the borrowed slot is given back";
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr) << "the environment is as the process got it";
}

TEST(OpenmpWaitPolicy, AnExplicitChoiceInTheEnvironmentWins) {
  char policy[] = "OMP_WAIT_POLICY=passive", spin[] = "GOMP_SPINCOUNT=0", other[] = "_=/bin/x",
       wait_like[] = "OMP_WAIT_POLICYX=1";
  char *with_policy[] = {other, policy, nullptr}, *with_spin[] = {spin, nullptr}, *neither[] = {other, wait_like, nullptr};
  EXPECT_TRUE(environment_sets_openmp_wait_policy(with_policy));
  EXPECT_TRUE(environment_sets_openmp_wait_policy(with_spin));
  EXPECT_FALSE(environment_sets_openmp_wait_policy(neither));
  EXPECT_FALSE(environment_sets_openmp_wait_policy(nullptr));
}

}  // namespace
}  // namespace disco
