// Generates the C driver of an AOT library from a Plan: symbol binding from
// the input extents, the model's checks, buffer sizes, the arena layout, and
// the kernel calls in order, as straight-line code. Nothing is interpreted
// when the library runs.
#pragma once
#include <string>
#include <vector>

#include "runtime/plan.h"

namespace disco::aot {

// Throws disco::Error when the plan has steps an AOT library cannot run
// (host ops with data-dependent sizes).
void check_plan_supported(const Plan &plan);

// `name`: the C prefix of every exported symbol; `header`: the file the
// driver includes ("NAME.h"); constants, if the plan has them, are the bytes
// at symbol NAME__disco_constants (constants_asm()). `gpu_api` ("cuda",
// "opencl"): the kernels run on a GPU; the driver moves outputs back to the
// host, frees the device memory, and without a CUDA driver fails cleanly.
// `install_functions`: the C functions that register the extern steps'
// kernels (Backend::aot_glue), called once before the steps are made;
// `par_for_threads_function`: the one NAME_set_num_threads also calls when
// the kernels' parallel loops run on the glue's pool.
std::string driver_source(const Plan &plan, const std::string &name, const std::string &header,
                          const std::string &gpu_api = "", const std::vector<std::string> &install_functions = {},
                          const std::string &par_for_threads_function = "");

// Assembly embedding `file` (relative to the assembler's folder) as NAME__disco_constants.
std::string constants_asm(const std::string &name, const std::string &file);

}  // namespace disco::aot
