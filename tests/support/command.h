// Running a program as a user would, for the tests of the command-line tools:
// its exit code and everything it printed.
#pragma once
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace disco::testing {

struct CommandResult {
  int exit_code;  // -1 if killed by a signal
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string &cmd) {
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "cannot start: " + cmd};
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// A new folder /tmp/disco-<tag>-XXXXXX.
inline std::string make_temp_dir(const std::string &tag) {
  std::string tmpl = "/tmp/disco-" + tag + "-XXXXXX";
  return mkdtemp(tmpl.data());
}

}  // namespace disco::testing
