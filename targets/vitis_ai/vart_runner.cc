// The VART glue (see vart_runner.h). Tensor buffers are host memory owned
// here; inputs are quantized with each runner tensor's fix_point (DPU_ROUND,
// saturated), outputs dequantized the same way. Float tensors (a runner that
// takes floats) are copied as they are.
#include "targets/vitis_ai/vart_runner.h"

#include <dlfcn.h>

#include <cstring>

#include <vart/runner.hpp>
#include <vart/tensor_buffer.hpp>
#include <xir/attrs/attrs.hpp>
#include <xir/graph/graph.hpp>
#include <xir/graph/subgraph.hpp>
#include <xir/tensor/tensor.hpp>

#include "frontend/errors.h"
#include "targets/vitis_ai/int8_ops.h"

namespace disco::vitis_ai {
namespace {

// A host buffer for one tensor, batch included.
class HostTensorBuffer : public vart::TensorBuffer {
 public:
  explicit HostTensorBuffer(const xir::Tensor *t) : vart::TensorBuffer(t), bytes_(t->get_data_size()) {}
  std::pair<std::uint64_t, std::size_t> data(const std::vector<std::int32_t> idx) override {
    size_t offset = 0;
    if (!idx.empty()) {
      const auto shape = get_tensor()->get_shape();
      size_t stride = bytes_.size();
      for (size_t d = 0; d < idx.size() && d < shape.size(); ++d) {
        stride /= static_cast<size_t>(shape[d]);
        offset += static_cast<size_t>(idx[d]) * stride;
      }
    }
    return {reinterpret_cast<std::uint64_t>(bytes_.data() + offset), bytes_.size() - offset};
  }
  std::vector<char> &bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
};

VartTensorInfo info_of(const xir::Tensor *t) {
  VartTensorInfo i;
  i.name = t->get_name();
  for (int32_t d : t->get_shape()) i.shape.push_back(d);
  i.dtype = t->get_data_type().to_string();
  if (t->has_attr("fix_point")) i.fix = t->get_attr<int32_t>("fix_point");
  return i;
}

bool is_float(const xir::Tensor *t) { return t->get_data_type().type == xir::DataType::FLOAT; }

}  // namespace

bool vart_available() { return true; }

struct VartRegionRunner::Impl {
  std::unique_ptr<xir::Graph> graph;
  std::unique_ptr<vart::Runner> runner;
  std::string label;
};

VartRegionRunner::VartRegionRunner(const std::string &xmodel, const std::string &lib) : impl_(new Impl) {
  impl_->label = "VART runner for '" + xmodel + "'";
  impl_->graph = xir::Graph::deserialize(xmodel);
  const xir::Subgraph *dpu = nullptr;
  for (const xir::Subgraph *s : impl_->graph->get_root_subgraph()->children_topological_sort())
    if (s->has_attr("device") && s->get_attr<std::string>("device") == "DPU") {
      dpu = s;
      break;
    }
  DISCO_CHECK(dpu, impl_->label, ": no subgraph with device DPU");
  DISCO_CHECK(dpu->has_attr("runner"), impl_->label, ": the DPU subgraph has no runner attribute");
  // VART aborts the process when it cannot load the runner library: load it here first.
  std::string runner_lib = lib;
  if (runner_lib.empty()) {
    const auto libs = dpu->get_attr<std::map<std::string, std::string>>("runner");
    if (auto it = libs.find("run"); it != libs.end()) runner_lib = it->second;
  }
  if (!runner_lib.empty()) {
    void *h = dlopen(runner_lib.c_str(), RTLD_LAZY | RTLD_LOCAL);
    DISCO_CHECK(h, impl_->label, ": cannot load the runner library '", runner_lib, "': ", dlerror());
    dlclose(h);
  }
  auto attrs = xir::Attrs::create();
  if (!lib.empty()) attrs->set_attr<std::map<std::string, std::string>>("lib", {{"DPU", lib}});
  impl_->runner = vart::Runner::create_runner_with_attrs(dpu, attrs.get());
  DISCO_CHECK(impl_->runner, impl_->label, ": VART made no runner");
}

VartRegionRunner::~VartRegionRunner() = default;

std::vector<VartTensorInfo> VartRegionRunner::inputs() const {
  std::vector<VartTensorInfo> out;
  for (const xir::Tensor *t : impl_->runner->get_input_tensors()) out.push_back(info_of(t));
  return out;
}

std::vector<VartTensorInfo> VartRegionRunner::outputs() const {
  std::vector<VartTensorInfo> out;
  for (const xir::Tensor *t : impl_->runner->get_output_tensors()) out.push_back(info_of(t));
  return out;
}

void VartRegionRunner::run(const std::vector<const float *> &inputs, const std::vector<float *> &outputs) {
  const auto in_t = impl_->runner->get_input_tensors(), out_t = impl_->runner->get_output_tensors();
  DISCO_CHECK(inputs.size() == in_t.size() && outputs.size() == out_t.size(), impl_->label, ": ", inputs.size(),
              " inputs and ", outputs.size(), " outputs for a runner of ", in_t.size(), " and ", out_t.size());
  std::vector<std::unique_ptr<HostTensorBuffer>> in_b, out_b;
  std::vector<vart::TensorBuffer *> in_p, out_p;
  for (size_t i = 0; i < in_t.size(); ++i) {
    in_b.push_back(std::make_unique<HostTensorBuffer>(in_t[i]));
    std::vector<char> &bytes = in_b.back()->bytes();
    const int64_t n = in_t[i]->get_element_num();
    if (is_float(in_t[i])) {
      std::memcpy(bytes.data(), inputs[i], n * sizeof(float));
    } else {
      const int fix = info_of(in_t[i]).fix;
      for (int64_t k = 0; k < n; ++k) bytes[k] = static_cast<char>(quantize_value(inputs[i][k], fix));
    }
    in_p.push_back(in_b.back().get());
  }
  for (const xir::Tensor *t : out_t) {
    out_b.push_back(std::make_unique<HostTensorBuffer>(t));
    out_p.push_back(out_b.back().get());
  }
  const auto job = impl_->runner->execute_async(in_p, out_p);
  DISCO_CHECK(job.second == 0, impl_->label, ": execute_async returned status ", job.second);
  const int status = impl_->runner->wait(static_cast<int>(job.first), -1);
  DISCO_CHECK(status == 0, impl_->label, ": wait returned status ", status);
  for (size_t i = 0; i < out_t.size(); ++i) {
    const std::vector<char> &bytes = out_b[i]->bytes();
    const int64_t n = out_t[i]->get_element_num();
    if (is_float(out_t[i])) {
      std::memcpy(outputs[i], bytes.data(), n * sizeof(float));
    } else {
      const int fix = info_of(out_t[i]).fix;
      for (int64_t k = 0; k < n; ++k) outputs[i][k] = dequantize_value(static_cast<int8_t>(bytes[k]), fix);
    }
  }
}

}  // namespace disco::vitis_ai
