// The VART glue when disco was configured without libvart.
#include "frontend/errors.h"
#include "targets/vitis_ai/vart_runner.h"

namespace disco::vitis_ai {

bool vart_available() { return false; }
struct VartRegionRunner::Impl {};
VartRegionRunner::VartRegionRunner(const std::string &xmodel, const std::string &) {
  fail("cannot run '", xmodel, "' through VART: disco was built without libvart (install libvart-dev, then reconfigure)");
}
VartRegionRunner::~VartRegionRunner() = default;
std::vector<VartTensorInfo> VartRegionRunner::inputs() const { return {}; }
std::vector<VartTensorInfo> VartRegionRunner::outputs() const { return {}; }
void VartRegionRunner::run(const std::vector<const float *> &, const std::vector<float *> &) {}

}  // namespace disco::vitis_ai
