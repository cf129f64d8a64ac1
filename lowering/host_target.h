// The Halide target for code that runs on this machine: Halide's own host
// detection, less the features this CPU or OS cannot run. Halide 14 gives
// an AMD EPYC of the Zen 4 generation (AVX-512 with BF16 and VNNI, but no
// AVX512-FP16) its Sapphire Rapids feature, and LLVM then emits FP16
// instructions: a half-float MatMul, uint16 Mod and NLLLoss died of SIGILL
// (vmovw). The C library's view (__builtin_cpu_supports, which also checks
// the register state the OS enabled) decides each feature.
#pragma once
#include <Halide.h>

namespace disco {

// For kernels compiled ahead of time or linked into a kernel library ("host").
Halide::Target usable_host_target();
// For Halide's JIT (constant folding, tests): HL_JIT_TARGET when set, else
// usable_host_target() with the JIT feature.
Halide::Target usable_jit_target();

}  // namespace disco
