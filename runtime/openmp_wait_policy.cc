#include "runtime/openmp_wait_policy.h"

#include <cstring>

namespace disco {

namespace {

// Why passive: see openmp_wait_policy.h. How: libgomp reads its settings only
// in its own constructor, which runs after libc has reset the environment to
// the one the process started with (an earlier setenv is lost) and before any
// constructor of ours. So the executable's .preinit_array, which runs first
// of all, puts the setting into that very environment array, in the slot of
// "_" (the shell's name of the program, read by nobody during start-up), and a
// constructor of ours puts "_" back once every library has started. An
// explicit OMP_WAIT_POLICY or GOMP_SPINCOUNT wins; without "_" nothing
// changes. (A shared library's .preinit_array is ignored.)
char kPassiveOpenmp[] = "OMP_WAIT_POLICY=PASSIVE";
char **g_displaced_slot = nullptr;
char *g_displaced_entry = nullptr;
bool g_passive = false;

bool starts_with(const char *s, const char *prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

void passive_openmp_by_default(int, char **, char **envp) {
  for (char **e = envp; e && *e; ++e)
    if (starts_with(*e, "OMP_WAIT_POLICY=") || starts_with(*e, "GOMP_SPINCOUNT=")) return;
  for (char **e = envp; e && *e; ++e)
    if (starts_with(*e, "_=")) {
      g_displaced_slot = e;
      g_displaced_entry = *e;
      *e = kPassiveOpenmp;
      g_passive = true;
      return;
    }
}
__attribute__((section(".preinit_array"), used)) void (*const passive_openmp_init)(int, char **,
                                                                                  char **) = passive_openmp_by_default;

__attribute__((constructor(101))) void restore_displaced_environment_entry() {
  if (g_displaced_slot) *g_displaced_slot = g_displaced_entry;
}

}  // namespace

bool openmp_passive_by_default() { return g_passive; }

}  // namespace disco
