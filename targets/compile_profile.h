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
  double kernel_compile_s = 0;  // compiling the distinct kernels, in parallel (wall time)
  double halide_s = 0;     // Halide's lowering of them (compile_to_module), summed over kernels
  double codegen_s = 0;    // LLVM's code generation for them, summed over kernels
  double runtime_s = 0;    // generating Halide's runtime object: once per target and compile cache folder
  double link_s = 0;       // linking the kernel library
  int kernels = 0;         // steps that call a Halide kernel
  int unique_kernels = 0;  // distinct kernels among them (targets/host/kernel_key.h)
  int stored_kernels = 0;  // of those, taken from the compile cache's kernel store (targets/kernel_store.h), not compiled
  int compile_workers = 0; // processes that compiled them at once

  // One line per phase, each starting with `indent`.
  std::string describe(const std::string &indent) const {
    char buf[1024];
    const char *in = indent.c_str();
    std::snprintf(buf, sizeof buf,
                  "%simport            %7.3f s\n%sshape inference   %7.3f s\n%spartitioning      %7.3f s\n"
                  "%slowering          %7.3f s (disco's lowering and schedules)\n"
                  "%skernel compile    %7.3f s (%d Halide kernel%s, %d unique, %d from the kernel cache, compiled on %d worker%s)\n"
                  "%s  Halide lowering %7.3f s (summed over the kernels compiled)\n"
                  "%s  LLVM codegen    %7.3f s (summed over the kernels compiled)\n"
                  "%sHalide runtime    %7.3f s (made once per target and cache folder)\n%slinking           %7.3f s\n",
                  in, import_s, in, shapes_s, in, partition_s, in, lower_s, in, kernel_compile_s, kernels,
                  kernels == 1 ? "" : "s", unique_kernels, stored_kernels, compile_workers, compile_workers == 1 ? "" : "s", in,
                  halide_s, in, codegen_s, in, runtime_s, in, link_s);
    return buf;
  }
};

}  // namespace disco
