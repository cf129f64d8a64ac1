// The example backend: an imaginary accelerator that runs 2-D float32
// convolutions (with a fused Relu) and same-shape Adds. It is the worked
// example of docs/writing-a-backend.md; the "accelerator" is simulated on the
// CPU with plain loops, so it runs anywhere and its numbers are easy to check.
//
//   example_rules.cc    what it takes (SupportRules) and why it declines the rest
//   example_backend.cc  the Backend: compiles each region into extern plan steps
//   example_runtime.cc  the runtime glue: the ExternKernels that run those steps
#pragma once
#include <memory>

#include "targets/backend.h"

namespace disco {

std::unique_ptr<Backend> make_example_backend();
// Registers "example.conv" and "example.add" with ExternKernelRegistry::global().
void install_example_runtime();

}  // namespace disco
