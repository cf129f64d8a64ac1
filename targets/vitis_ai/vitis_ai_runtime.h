// The vitis_ai runtime glue alone (disco_vitis_ai_runtime: no Halide, no
// compiler): what runs the "vitis_ai.region" steps of a plan.
#pragma once

namespace disco::vitis_ai {

// Registers "vitis_ai.region" with ExternKernelRegistry::global(); the
// regions run on the int8 engine in use (int8_engine.h; portable unless
// install_vitis_ai_runtime set Halide's), or through VART where a compiled
// DPU model is installed ($DISCO_VITIS_AI_DPU_DIR). Once per process: later
// calls do nothing.
void install_region_kernel();

}  // namespace disco::vitis_ai
