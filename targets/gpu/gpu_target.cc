#include "targets/gpu/gpu_target.h"

#include "Halide.h"
#include "targets/host/host_codegen.h"

namespace disco {

std::string expand_gpu_target(const std::string &name) {
  // PoCL and every CUDA device have doubles; float64 models need them on OpenCL.
  if (name == "opencl") return "host-opencl-cl_doubles";
  if (name == "cuda" || name == "cuda70") return "host-cuda-cuda_capability_70";
  if (name == "cuda80") return "host-cuda-cuda_capability_80";
  if (name == "cuda86") return "host-cuda-cuda_capability_86";
  return name;
}

std::string gpu_api_of(const std::string &target) {
  const std::string t = expand_gpu_target(target);
  if (t.find("opencl") == std::string::npos && t.find("cuda") == std::string::npos) return "";
  const Halide::Target ht = parse_target(t);
  if (ht.has_feature(Halide::Target::OpenCL)) return "opencl";
  if (ht.has_feature(Halide::Target::CUDA)) return "cuda";
  return "";
}

}  // namespace disco
