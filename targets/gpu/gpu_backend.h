// The GPU backends, `opencl` and `cuda`: they take every node the host
// backend takes, lower it the same way and differ only in schedules
// (schedules/gpu_schedule.h). Host-side work stays on the CPU: shape computation,
// data-dependent host ops and graph-output copies. They need a GPU target
// (gpu_target.h), which `--target opencl` or `--target cuda` selects.
#pragma once
#include <memory>

#include "targets/backend.h"

namespace disco {

std::unique_ptr<Backend> make_opencl_backend();
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace disco
