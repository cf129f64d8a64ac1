// What a fuzz target counts as a finding. disco::Error is disco's answer to
// bad input (a clean one-line message): expected, not a finding. Any other
// exception would reach the user as std:: text (issue #23 point 3), so it
// aborts and libFuzzer saves the input, as it does for crashes, sanitizer
// reports, leaks, timeouts and allocations over -malloc_limit_mb.
// DISCO_FUZZ_ALLOW_STD=1 lets a run go on past such exceptions (printing the
// first of each kind), to look for crashes behind a known, unfixed one.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>
#include <typeinfo>

#include "frontend/errors.h"

namespace disco_fuzz {

template <typename F>
void guard(F &&f) {
  try {
    f();
  } catch (const disco::Error &) {
    // A clean error: what bad input should give.
  } catch (const std::exception &e) {
    static const bool allow = std::getenv("DISCO_FUZZ_ALLOW_STD") != nullptr;
    static std::set<std::string> seen;
    const std::string kind = typeid(e).name();
    if (!allow) {
      std::fprintf(stderr, "fuzz finding: %s escaped as a non-disco exception: %s\n", kind.c_str(), e.what());
      std::abort();
    }
    if (seen.insert(kind).second) std::fprintf(stderr, "fuzz: allowed %s: %s\n", kind.c_str(), e.what());
  }
}

// A file of this process's own under /tmp, for readers that take a path.
inline std::string scratch_path(const std::string &name) {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/disco-fuzz-XXXXXX";
    const char *d = mkdtemp(tmpl);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir + "/" + name;
}

inline void write_bytes(const std::string &path, const uint8_t *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
}

}  // namespace disco_fuzz
