#include "targets/onednn/onednn_kernels.h"

#include <cstring>
#include <mutex>

#include "targets/onednn/onednn_step.h"

namespace disco {

namespace {

// oneDNN runs on OpenMP (libgomp), whose threads spin-wait at every barrier
// by default: for over 5 ms here before they sleep. With two threads on two
// busy cores, a master spinning while its worker waits for a core turned
// bert_layer at (1,32) from 8 ms into 100 ms. OMP_WAIT_POLICY=PASSIVE makes
// waiting threads sleep at once, but libgomp reads it only in its own
// constructor, which runs after libc's has reset the environment to the one
// the process started with (so an earlier setenv is lost) and before any
// constructor of ours. So the executable's .preinit_array, which runs first
// of all, puts the setting into that very environment array, in the slot of
// "_" (the shell's name of the program, read by nobody during start-up), and
// a constructor of ours puts "_" back once every library has started. An
// explicit OMP_WAIT_POLICY or GOMP_SPINCOUNT wins; without "_" nothing
// changes. (In a shared library .preinit_array is ignored.)
char kPassiveOpenmp[] = "OMP_WAIT_POLICY=PASSIVE";
char **g_displaced_slot = nullptr;
char *g_displaced_entry = nullptr;

bool starts_with(const char *s, const char *prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

void passive_openmp_by_default(int, char **, char **envp) {
  for (char **e = envp; e && *e; ++e)
    if (starts_with(*e, "OMP_WAIT_POLICY=") || starts_with(*e, "GOMP_SPINCOUNT=")) return;
  for (char **e = envp; e && *e; ++e)
    if (starts_with(*e, "_=")) {
      g_displaced_slot = e;
      g_displaced_entry = *e;
      *e = kPassiveOpenmp;
      return;
    }
}
__attribute__((section(".preinit_array"), used)) void (*const passive_openmp_init)(int, char **,
                                                                                  char **) = passive_openmp_by_default;

__attribute__((constructor(101))) void restore_displaced_environment_entry() {
  if (g_displaced_slot) *g_displaced_slot = g_displaced_entry;
}

}  // namespace

void install_onednn_runtime() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto &registry = ExternKernelRegistry::global();
    registry.add("onednn.matmul", make_onednn_matmul_kernel);
    registry.add("onednn.conv", make_onednn_conv_kernel);
    registry.add("onednn.pool", make_onednn_pool_kernel);
  });
}

}  // namespace disco
