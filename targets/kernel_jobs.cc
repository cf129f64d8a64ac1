#include "targets/kernel_jobs.h"

#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <exception>
#include <map>
#include <thread>

#include "frontend/errors.h"

namespace disco {

namespace {

// What a child sends back through its pipe: its times, then an error message if it failed.
struct ChildReport {
  double halide_s = 0, codegen_s = 0;
  int failed = 0;
};
constexpr size_t kMaxMessage = 4000;  // well under a pipe's buffer: a child never blocks writing

void write_all(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    s.append(buf, static_cast<size_t>(r));
  }
  return s;
}

[[noreturn]] void run_child(const KernelJob &job, int fd) {
  ChildReport report;
  std::string message;
  try {
    CompileProfile p;
    job.compile(p);
    report.halide_s = p.halide_s;
    report.codegen_s = p.codegen_s;
  } catch (const std::exception &e) {
    report.failed = 1;
    message = e.what();
  } catch (...) {
    report.failed = 1;
    message = "unknown error";
  }
  if (message.size() > kMaxMessage) message.resize(kMaxMessage);
  write_all(fd, &report, sizeof report);
  write_all(fd, message.data(), message.size());
  ::close(fd);
  _exit(0);  // no destructors or atexit handlers: they belong to the parent
}

struct Running {
  size_t job;
  int fd;
};

}  // namespace

int compile_workers(int requested) {
  if (requested > 0) return requested;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void run_kernel_jobs(const std::vector<KernelJob> &jobs, int workers, CompileProfile &profile,
                     const std::function<void(const std::string &)> &progress,
                     const std::function<void(size_t done, size_t total)> &kernel_done) {
  if (jobs.empty()) return;
  workers = std::max(1, workers);
  std::vector<ChildReport> reports(jobs.size());
  std::vector<std::string> messages(jobs.size());
  std::map<pid_t, Running> running;
  size_t next = 0, done = 0;
  if (kernel_done) kernel_done(0, jobs.size());
  std::fflush(stdout);  // a child must not flush the parent's buffered output again
  std::fflush(stderr);
  // Waits for a child to finish: its pipe reaches end-of-file when it exits.
  // Only our own children are waited for, never others of the host process.
  auto reap_one = [&] {
    std::vector<pollfd> fds;
    for (const auto &[pid, r] : running) fds.push_back({r.fd, POLLIN, 0});
    while (::poll(fds.data(), fds.size(), -1) < 0)
      DISCO_CHECK(errno == EINTR, "waiting for a kernel compile failed: ", std::strerror(errno));
    for (auto it = running.begin(); it != running.end(); ++it) {
      const pollfd &p = fds[static_cast<size_t>(std::distance(running.begin(), it))];
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const pid_t pid = it->first;
      const Running r = it->second;
      running.erase(it);
      const std::string data = read_all(r.fd);  // to end-of-file: the child has exited or is exiting
      ::close(r.fd);
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      ChildReport &rep = reports[r.job];
      if (data.size() >= sizeof rep) {
        std::memcpy(&rep, data.data(), sizeof rep);
        messages[r.job] = data.substr(sizeof rep);
      } else {
        rep.failed = 1;
        messages[r.job] = "compiling kernel " + jobs[r.job].name + ": the compiler process " +
                          (WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                               : std::string("exited without a result"));
      }
      ++done;
      if (progress) {
        char secs[32];
        std::snprintf(secs, sizeof secs, ", %.2f s", rep.halide_s + rep.codegen_s);
        progress("  compiled " + jobs[r.job].name + " (" + std::to_string(done) + "/" + std::to_string(jobs.size()) +
                 (rep.failed ? ", failed)" : std::string(secs) + ")"));
      }
      if (kernel_done) kernel_done(done, jobs.size());
      return;
    }
  };
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < workers) {
      int fds[2];
      DISCO_CHECK(::pipe(fds) == 0, "cannot compile kernel ", jobs[next].name, ": pipe: ", std::strerror(errno));
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::close(fds[0]);
        run_child(jobs[next], fds[1]);
      }
      ::close(fds[1]);
      if (pid < 0) {
        ::close(fds[0]);
        if (running.empty()) fail("cannot start a process to compile kernel ", jobs[next].name, ": ", std::strerror(errno));
        break;  // out of processes: wait for one to finish
      }
      running[pid] = {next++, fds[0]};
    }
    reap_one();
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (reports[i].failed) fail(messages[i]);
    profile.halide_s += reports[i].halide_s;
    profile.codegen_s += reports[i].codegen_s;
  }
}

}  // namespace disco
