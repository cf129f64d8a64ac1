#include "tools/openmp_short_spin.h"

#include <cstring>

#include "runtime/openmp_wait_policy.h"

namespace disco {

namespace {

// Why a short spin: see runtime/openmp_wait_policy.h. How: libgomp reads its
// settings only in its own constructor, which runs after libc has reset the
// environment to the one the process started with (an earlier setenv, even
// at the start of main, is too late or lost) and before any constructor of
// ours. So the executable's .preinit_array, which runs first of all, puts the
// setting into that very environment array, in the slot of "_" (the shell's
// name of the program, read by nobody during start-up), and a constructor of
// ours puts "_" back once every library has started. Without "_" nothing
// changes. This works only in an executable (a shared library's
// .preinit_array is ignored), and only executables link this file.
char kShortSpinEntry[sizeof(kRecommendedOpenmpSpin)];
char **g_displaced_slot = nullptr;
char *g_displaced_entry = nullptr;
bool g_short_spin = false;

void short_spin_openmp_by_default(int, char **, char **envp) {
  if (environment_sets_openmp_wait_policy(envp)) return;
  for (char **e = envp; e && *e; ++e)
    if (std::strncmp(*e, "_=", 2) == 0) {
      std::memcpy(kShortSpinEntry, kRecommendedOpenmpSpin, sizeof(kRecommendedOpenmpSpin));
      g_displaced_slot = e;
      g_displaced_entry = *e;
      *e = kShortSpinEntry;
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
