#include "targets/onednn/onednn_kernels.h"

#include <mutex>

#include "targets/onednn/onednn_step.h"

namespace disco {

std::unique_ptr<ExternKernel> make_onednn_concat_kernel(const PlanStep &step);  // onednn_concat.cc
std::unique_ptr<ExternKernel> make_onednn_binary_kernel(const PlanStep &step);  // onednn_binary.cc
std::unique_ptr<ExternKernel> make_onednn_channel_gather_kernel(const PlanStep &step);  // onednn_channel_gather.cc
std::unique_ptr<ExternKernel> make_onednn_recurrence_kernel(const PlanStep &step);      // onednn_recurrence.cc

void install_onednn_runtime() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto &registry = ExternKernelRegistry::global();
    registry.add("onednn.matmul", make_onednn_matmul_kernel);
    registry.add("onednn.conv", make_onednn_conv_kernel);
    registry.add("onednn.pool", make_onednn_pool_kernel);
    registry.add("onednn.concat", make_onednn_concat_kernel);
    registry.add("onednn.binary", make_onednn_binary_kernel);
    registry.add("onednn.channel_gather", make_onednn_channel_gather_kernel);
    registry.add("onednn.recurrence", make_onednn_recurrence_kernel);
  });
}

}  // namespace disco
