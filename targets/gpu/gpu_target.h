// GPU target names. `--target opencl` and `--target cuda` (cuda70, cuda80,
// cuda86 for a compute capability; cuda is cuda70) stand for Halide targets of
// the host CPU with that GPU API; a full Halide target string with the
// opencl or cuda feature works too. A GPU target also picks its backend
// (opencl or cuda) unless the backends are given explicitly.
#pragma once
#include <string>


namespace disco {

// The Halide target string for a short GPU name; any other name unchanged.
std::string expand_gpu_target(const std::string &name);
// "opencl", "cuda", or "" when the (expanded) target has no GPU API.
std::string gpu_api_of(const std::string &target);

}  // namespace disco
