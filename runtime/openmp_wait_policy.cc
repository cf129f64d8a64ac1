#include "runtime/openmp_wait_policy.h"

#include <cstring>

namespace disco {

namespace {

// Why a short spin: see openmp_wait_policy.h. How: libgomp reads its settings only
// in its own constructor, which runs after libc has reset the environment to
// the one the process started with (an earlier setenv is lost) and before any
// constructor of ours. So the executable's .preinit_array, which runs first
// of all, puts the setting into that very environment array, in the slot of
// "_" (the shell's name of the program, read by nobody during start-up), and a
// constructor of ours puts "_" back once every library has started. An
// explicit OMP_WAIT_POLICY or GOMP_SPINCOUNT wins; without "_" nothing
// changes. (A shared library's .preinit_array is ignored.)
char kShortSpinOpenmp[] = "GOMP_SPINCOUNT=30000";
char **g_displaced_slot = nullptr;
char *g_displaced_entry = nullptr;
bool g_short_spin = false;

bool starts_with(const char *s, const char *prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

void short_spin_openmp_by_default(int, char **, char **envp) {
  for (char **e = envp; e && *e; ++e)
    if (starts_with(*e, "OMP_WAIT_POLICY=") || starts_with(*e, "GOMP_SPINCOUNT=")) return;
  for (char **e = envp; e && *e; ++e)
    if (starts_with(*e, "_=")) {
      g_displaced_slot = e;
      g_displaced_entry = *e;
      *e = kShortSpinOpenmp;
      g_short_spin = true;
      return;
    }
}
__attribute__((section(".preinit_array"), used)) void (*const short_spin_openmp_init)(int, char **,
                                                                                     char **) = short_spin_openmp_by_default;

__attribute__((constructor(101))) void restore_displaced_environment_entry() {
  if (g_displaced_slot) *g_displaced_slot = g_displaced_entry;
}

}  // namespace

bool openmp_short_spin_by_default() { return g_short_spin; }

}  // namespace disco
