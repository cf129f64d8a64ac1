// The C entry an AOT library's driver calls before it creates its oneDNN
// steps (Backend::aot_glue, runtime/extern_c_abi.h): it registers the oneDNN
// kernels, which a static link would otherwise leave out.
#include "targets/onednn/onednn_kernels.h"

extern "C" void disco_install_onednn_glue(void) { disco::install_onednn_runtime(); }
