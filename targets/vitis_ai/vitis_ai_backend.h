// The vitis_ai backend: int8 DPU regions (Xilinx Vitis AI, DPUCZDX8G).
//
//   vitis_ai_rules.cc    what a DPU runs, within its documented limits (dpu_limits.h)
//   calibrate.cc         activation samples from the float model (float_reference.cc)
//   quantize.cc          power-of-two fix positions; BatchNormalization folding
//   region_builder.cc    a region -> a QProgram (region_program.h)
//   int8_ops.cc          the bit-exact int8 reference executor (portable loops)
//   int8_halide.cc       the same ops as Halide pipelines (int8_engine.h), for disco run
//   region_executor.cc   runs a QProgram on the host
//   xir_emit.cc          the region as a quantized XIR graph (NAME.rN.xmodel)
//   vart_runner.cc       runs a compiled DPU model through vart::Runner
//   vitis_ai_backend.cc  the Backend; vitis_ai_runtime.cc its ExternKernel
//   vitis_ai_aot_glue.cc the C entry AOT libraries call (Backend::aot_glue)
// The runtime side (int8_ops, quantize, region_program, region_executor,
// vart_runner, vitis_ai_runtime, vitis_ai_aot_glue) is its own library,
// disco_vitis_ai_runtime, without Halide or the compiler.
// See targets/vitis_ai/README.md.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "targets/backend.h"

namespace disco {

// `calibration_samples`: FILE.npy or INPUT=FILE.npy each (calibrate.h); empty: seeded noise.
std::unique_ptr<Backend> make_vitis_ai_backend(std::vector<std::string> calibration_samples = {});
// Registers "vitis_ai.region" with ExternKernelRegistry::global()
// (vitis_ai_runtime.h) and makes its regions run on the Halide int8 engine.
void install_vitis_ai_runtime();

}  // namespace disco
