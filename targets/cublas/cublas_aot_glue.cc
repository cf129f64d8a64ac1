// The C entry an AOT library's driver calls before it creates its cuBLAS
// steps (Backend::aot_glue, runtime/extern_c_abi.h): it registers the
// "cublas.matmul" kernel, which a static link would otherwise leave out. The
// kernel loads the CUDA driver and cuBLAS with dlopen at its first run
// (cuda_api.h), so the library links neither.
#include "targets/cublas/cublas_backend.h"

extern "C" void disco_install_cublas_glue(void) {
  static const bool done = (disco::install_cublas_runtime(), true);  // once, whoever calls first
  (void)done;
}
