// Turns scheduled kernels into machine code for the x86 host: one object per
// kernel (without Halide's runtime), one object holding the runtime, and a
// shared library that links them, which the runtime dlopens.
#pragma once
#include <string>
#include <vector>

#include "Halide.h"
#include "lowering/lower_graph.h"
#include "targets/compile_profile.h"

namespace disco {

// "host" means the machine this runs on; anything else is a Halide target string.
Halide::Target parse_target(const std::string &name);

// The kernel's ABI: input buffers, then int32 symbols (in name order), then
// outputs. Adds Halide's lowering and LLVM's code generation time to `profile`.
void compile_kernel_object(LoweredKernel &k, const std::string &fn_name, const std::string &object_path,
                           const Halide::Target &target, CompileProfile *profile = nullptr);
void compile_runtime_object(const std::string &object_path, const Halide::Target &target);
void link_shared_library(const std::vector<std::string> &objects, const std::string &out_path);

}  // namespace disco
