// Where a cold compile's time goes, phase by phase (`disco run --verbose`,
// `disco compile`): what a user waiting on a JIT compile, or a build running
// `disco_add_model`, is paying for. The driver times the phases around the
// backends; the host backend adds each kernel's lowering and code generation.
#pragma once
#include <cstdio>
#include <string>

namespace disco {

struct CompileProfile {
  double import_s = 0;     // parsing the ONNX file
  double shapes_s = 0;     // shape inference and graph rewrites
  double partition_s = 0;  // the backends' rules and regions
  double lower_s = 0;      // disco's lowering and scheduling of the Halide kernels
  double halide_s = 0;     // Halide's lowering of them (compile_to_module), summed over kernels
  double codegen_s = 0;    // LLVM's code generation for them, summed over kernels
  double runtime_s = 0;    // generating Halide's runtime object: once per target and compile cache folder
  double link_s = 0;       // linking the kernel library
  int kernels = 0;         // Halide kernels compiled

  // One line per phase, each starting with `indent`.
  std::string describe(const std::string &indent) const {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%simport            %7.3f s\n%sshape inference   %7.3f s\n%spartitioning      %7.3f s\n"
                  "%slowering          %7.3f s (disco's lowering and schedules)\n"
                  "%sHalide lowering   %7.3f s\n%sLLVM codegen      %7.3f s (%d kernel%s)\n"
                  "%sHalide runtime    %7.3f s (made once per target and cache folder)\n%slinking           %7.3f s\n",
                  indent.c_str(), import_s, indent.c_str(), shapes_s, indent.c_str(), partition_s, indent.c_str(),
                  lower_s, indent.c_str(), halide_s, indent.c_str(), codegen_s, kernels, kernels == 1 ? "" : "s",
                  indent.c_str(), runtime_s, indent.c_str(), link_s);
    return buf;
  }
};

}  // namespace disco
