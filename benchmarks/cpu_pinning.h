// Pins the harness and its ONNX Runtime peer to the same CPUs for cells that
// use fewer threads than the machine has CPUs.
//
// Why: on this 2-core VM one CPU runs 7-10% slower than the other for both
// runtimes alike (CPU 0 also takes most of the function-call and reschedule
// interrupts): llama_block at 1x128x768 on one thread, four alternating runs
// each, took 10.07-10.18 ms on CPU 0 and 9.38-9.50 on CPU 1 in disco, and
// 11.5-12.8 against 10.3-10.4 ms in ONNX Runtime. Unpinned, the scheduler puts
// each process where it likes, so a one-thread cell's ratio moved by the speed
// of whichever CPU each side happened to get. Pinned, both sides run on the
// same CPUs, and the ratio compares the runtimes rather than the cores. The
// highest-numbered CPUs are used, as CPU 0 takes the housekeeping.
//
// Every thread of each process is pinned (sched_setaffinity applies to one
// thread), and threads created later inherit their creator's mask; widening
// back for a cell with all CPUs walks the threads again.
#pragma once

#include <dirent.h>
#include <sched.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "frontend/errors.h"

namespace disco::bench {

class CpuPinning {
 public:
  // `enabled` false: a no-op (the harness's --no-pin).
  explicit CpuPinning(bool enabled) : enabled_(enabled) {
    CPU_ZERO(&all_);
    DISCO_CHECK(sched_getaffinity(0, sizeof all_, &all_) == 0, "sched_getaffinity failed");
    cpus_ = cpu_list(all_);
  }

  // The CPUs of `set`, in order.
  static std::vector<int> cpu_list(const cpu_set_t &set) {
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
  }

  int cpu_count() const { return static_cast<int>(cpus_.size()); }

  // The CPUs a cell of `threads` threads runs on, as text ("1", "2,3"), or
  // "" when it runs unpinned (all CPUs, or pinning off).
  std::string cpus_for(int threads) const {
    if (!enabled_ || threads >= cpu_count()) return "";
    std::string text;
    for (int c : chosen(threads)) text += (text.empty() ? "" : ",") + std::to_string(c);
    return text;
  }

  // Pins every thread of this process and of each of `others` to the CPUs
  // for `threads` threads, or back to all of the starting CPUs.
  void apply(int threads, const std::vector<pid_t> &others) const {
    if (!enabled_) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (threads >= cpu_count())
      set = all_;
    else
      for (int c : chosen(threads)) CPU_SET(c, &set);
    pin_process("self", set);
    for (pid_t pid : others) pin_process(std::to_string(pid), set);
  }

 private:
  std::vector<int> chosen(int threads) const {
    return std::vector<int>(cpus_.end() - std::max(threads, 1), cpus_.end());
  }

  static void pin_process(const std::string &pid, const cpu_set_t &set) {
    const std::string dir = "/proc/" + pid + "/task";
    DIR *d = opendir(dir.c_str());
    DISCO_CHECK(d != nullptr, "cannot list ", dir);
    while (const dirent *e = readdir(d)) {
      const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
      if (tid <= 0) continue;
      // A thread that ended since the listing is no error.
      if (sched_setaffinity(tid, sizeof set, &set) != 0 && errno != ESRCH) {
        closedir(d);
        DISCO_CHECK(false, "sched_setaffinity failed for thread ", tid, " of ", dir);
      }
    }
    closedir(d);
  }

  bool enabled_;
  cpu_set_t all_;
  std::vector<int> cpus_;
};

}  // namespace disco::bench
