// The harness's CPU pinning (benchmarks/cpu_pinning.h): which CPUs a cell of
// some threads gets, and that every thread of this process and of a child
// is pinned there and widened back afterwards.
#include "benchmarks/cpu_pinning.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace disco::bench {
namespace {

// The CPUs of each thread of process `pid` ("self" or a number), as sorted lists.
std::vector<std::vector<int>> thread_cpus(const std::string &pid) {
  std::vector<std::vector<int>> out;
  DIR *d = opendir(("/proc/" + pid + "/task").c_str());
  if (!d) return out;
  while (const dirent *e = readdir(d)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
    if (tid <= 0) continue;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(tid, sizeof set, &set) != 0) continue;
    out.push_back(CpuPinning::cpu_list(set));
  }
  closedir(d);
  return out;
}

std::vector<int> start_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  return CpuPinning::cpu_list(set);
}

TEST(CpuPinning, ChoosesTheLastCpusAndNoneForAllOfThem) {
  const std::vector<int> all = start_cpus();
  const CpuPinning pinning(true);
  ASSERT_EQ(pinning.cpu_count(), static_cast<int>(all.size()));
  EXPECT_EQ(pinning.cpus_for(static_cast<int>(all.size())), "");
  EXPECT_EQ(pinning.cpus_for(static_cast<int>(all.size()) + 3), "");
  if (all.size() < 2) GTEST_SKIP() << "one CPU: nothing to pin";
  EXPECT_EQ(pinning.cpus_for(1), std::to_string(all.back()));
  EXPECT_EQ(CpuPinning(false).cpus_for(1), "");
}

TEST(CpuPinning, PinsEveryThreadOfBothProcessesAndWidensThemBack) {
  const std::vector<int> all = start_cpus();
  if (all.size() < 2) GTEST_SKIP() << "one CPU: nothing to pin";
  // A second thread here, made before pinning, and a child process.
  std::atomic<bool> stop{false};
  std::thread worker([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  const std::string child_id = std::to_string(child);
  const CpuPinning pinning(true);
  pinning.apply(1, {child});
  for (const auto &cpus : thread_cpus("self")) EXPECT_EQ(cpus, std::vector<int>{all.back()});
  for (const auto &cpus : thread_cpus(child_id)) EXPECT_EQ(cpus, std::vector<int>{all.back()});
  EXPECT_EQ(thread_cpus("self").size(), 2u);
  pinning.apply(static_cast<int>(all.size()), {child});
  for (const auto &cpus : thread_cpus("self")) EXPECT_EQ(cpus, all);
  for (const auto &cpus : thread_cpus(child_id)) EXPECT_EQ(cpus, all);
  // Off: nothing changes.
  CpuPinning(false).apply(1, {child});
  for (const auto &cpus : thread_cpus("self")) EXPECT_EQ(cpus, all);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  stop = true;
  worker.join();
}

}  // namespace
}  // namespace disco::bench
