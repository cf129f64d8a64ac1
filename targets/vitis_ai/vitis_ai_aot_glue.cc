// The C entry an AOT library's driver calls before it creates its vitis_ai
// steps (Backend::aot_glue, runtime/extern_c_abi.h): it registers the region
// kernel, which a static link would otherwise leave out. The library keeps
// the portable int8 engine (no Halide JIT inside it); VART runs a region
// where $DISCO_VITIS_AI_DPU_DIR holds its compiled model, as in disco run.
#include "targets/vitis_ai/vitis_ai_runtime.h"

extern "C" void disco_install_vitis_ai_glue(void) { disco::vitis_ai::install_region_kernel(); }
