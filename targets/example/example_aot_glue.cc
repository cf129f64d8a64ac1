// The C entry an AOT library's driver calls before it creates its example
// steps (Backend::aot_glue, runtime/extern_c_abi.h): it registers the
// example kernels, which a static link would otherwise leave out.
#include "targets/example/example_backend.h"

extern "C" void disco_install_example_glue(void) {
  static const bool done = (disco::install_example_runtime(), true);  // once, whoever calls first
  (void)done;
}
