#include "targets/onednn/onednn_kernels.h"

#include <mutex>

#include "targets/onednn/onednn_step.h"

namespace disco {

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
