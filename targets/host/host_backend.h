// The host backend: takes every node that disco can lower and compiles each
// fusion group of its regions into one Halide kernel for the host CPU. It is
// the last backend of every list, the fallback for what others decline.
#pragma once
#include <memory>

#include "targets/backend.h"

namespace disco {

std::unique_ptr<Backend> make_host_backend();

// A kernel that copies a value into the next output buffer: graph outputs
// that are inputs, constants or repeats of another output.
void compile_host_copy(int vid, PlanBuilder &builder);

}  // namespace disco
