// The VART glue: runs a region's compiled DPU subgraph through
// vart::Runner (created with vart::Runner::create_runner_with_attrs), with
// float <-> int8 conversion at the region's edges using the fix positions
// the tensors carry. The runner library is selectable: a subgraph's
// `runner` attribute or the attrs key `lib` names it (VART's dummy runner,
// libvart-dummy-runner.so, checks the tensor plumbing without a device).
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace disco::vitis_ai {

bool vart_available();

struct VartTensorInfo {
  std::string name;
  std::vector<int64_t> shape;  // as VART reports it (NHWC for feature maps)
  std::string dtype;           // "xint8", "float32", ...
  int fix = 0;                 // fix_point attribute, when present
};

class VartRegionRunner {
 public:
  // `xmodel`: a serialized XIR graph; the first child subgraph of the root
  // whose device is "DPU" is run. `lib`: the runner library (empty: VART's choice).
  VartRegionRunner(const std::string &xmodel, const std::string &lib);
  ~VartRegionRunner();
  std::vector<VartTensorInfo> inputs() const;
  std::vector<VartTensorInfo> outputs() const;
  // Float NHWC inputs, quantized with each input's fix point; outputs dequantized.
  void run(const std::vector<const float *> &inputs, const std::vector<float *> &outputs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace disco::vitis_ai
