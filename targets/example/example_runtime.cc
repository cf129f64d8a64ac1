// The example accelerator's runtime glue: one ExternKernel per extern step.
// The accelerator is simulated on the CPU with plain loops; a vendor would
// copy the tensors to the device and launch its kernels here instead. Tensors
// arrive dense, row-major, in ONNX dim order, outputs already allocated at
// the shapes disco inferred; each kernel checks what it relies on and names
// its step (label) when something does not fit.
#include <algorithm>

#include "frontend/errors.h"
#include "runtime/extern_kernel.h"
#include "targets/example/example_backend.h"

namespace disco {
namespace {

std::string shape_text(const std::vector<int64_t> &s) { return "[" + join_ints(s) + "]"; }

void require_f32(const ExternTensor &t, const std::string &label, const char *what) {
  DISCO_CHECK(t.dtype == DType::F32, label, ": ", what, " is ", dtype_name(t.dtype), ", expected float32");
}

// Y = Relu?(Conv(X, W) + B) with X [N, C, H, W], W [M, C, kh, kw], Y [N, M, oh, ow].
class ExampleConv : public ExternKernel {
 public:
  explicit ExampleConv(const PlanStep &step) : label_("step " + step.label + " (example.conv)") {
    strides_ = param_ints(step, "strides");
    dilations_ = param_ints(step, "dilations");
    pads_ = param_ints(step, "pads");  // top, left, bottom, right
    relu_ = param_int(step, "relu") != 0;
    DISCO_CHECK(strides_.size() == 2 && dilations_.size() == 2 && pads_.size() == 4, label_,
                ": needs 2 strides, 2 dilations and 4 pads");
    for (int i = 0; i < 2; ++i)
      DISCO_CHECK(strides_[i] >= 1 && dilations_[i] >= 1 && pads_[i] >= 0 && pads_[i + 2] >= 0, label_,
                  ": strides and dilations must be positive and pads non-negative");
  }

  void run(const ExternCall &call) override {
    DISCO_CHECK(call.inputs.size() >= 2 && call.outputs.size() == 1, label_, ": expects X, W, [B] and one output");
    const ExternTensor &x = call.inputs[0], &w = call.inputs[1], &y = call.outputs[0];
    const ExternTensor *b = call.inputs.size() > 2 && call.inputs[2].data ? &call.inputs[2] : nullptr;
    for (const ExternTensor *t : {&x, &w, &y}) require_f32(*t, label_, "a tensor");
    DISCO_CHECK(x.shape.size() == 4 && w.shape.size() == 4 && y.shape.size() == 4, label_, ": X, W and Y must be 4-D");
    DISCO_CHECK(x.shape[1] == w.shape[1], label_, ": X has ", x.shape[1], " channels, W expects ", w.shape[1]);
    const std::vector<int64_t> want{x.shape[0], w.shape[0], out_extent(x, w, 0), out_extent(x, w, 1)};
    DISCO_CHECK(y.shape == want, label_, ": output is ", shape_text(y.shape), ", the geometry gives ",
                shape_text(want));
    if (b) require_f32(*b, label_, "B");
    DISCO_CHECK(!b || b->num_elements() == w.shape[0], label_, ": B has ", b ? b->num_elements() : 0, " values for ",
                w.shape[0], " output channels");
    conv(static_cast<const float *>(x.data), x.shape, static_cast<const float *>(w.data), w.shape,
         b ? static_cast<const float *>(b->data) : nullptr, static_cast<float *>(y.data), y.shape);
  }

 private:
  // floor((in + pads - window) / stride) + 1; the window spans dilation * (k - 1) + 1.
  int64_t out_extent(const ExternTensor &x, const ExternTensor &w, int axis) const {
    const int64_t room =
        x.shape[2 + axis] + pads_[axis] + pads_[axis + 2] - dilations_[axis] * (w.shape[2 + axis] - 1) - 1;
    return room < 0 ? 0 : room / strides_[axis] + 1;
  }

  void conv(const float *x, const std::vector<int64_t> &xs, const float *w, const std::vector<int64_t> &ws,
            const float *b, float *y, const std::vector<int64_t> &ys) const {
    const int64_t C = xs[1], H = xs[2], W = xs[3], KH = ws[2], KW = ws[3];
    for (int64_t n = 0; n < ys[0]; ++n)
      for (int64_t m = 0; m < ys[1]; ++m)
        for (int64_t oh = 0; oh < ys[2]; ++oh)
          for (int64_t ow = 0; ow < ys[3]; ++ow) {
            float acc = b ? b[m] : 0.0f;
            for (int64_t c = 0; c < C; ++c)
              for (int64_t kh = 0; kh < KH; ++kh) {
                const int64_t ih = oh * strides_[0] + kh * dilations_[0] - pads_[0];
                if (ih < 0 || ih >= H) continue;  // padding contributes 0
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t iw = ow * strides_[1] + kw * dilations_[1] - pads_[1];
                  if (iw < 0 || iw >= W) continue;
                  acc += x[((n * C + c) * H + ih) * W + iw] * w[((m * C + c) * KH + kh) * KW + kw];
                }
              }
            y[((n * ys[1] + m) * ys[2] + oh) * ys[3] + ow] = relu_ ? std::max(acc, 0.0f) : acc;
          }
  }

  std::string label_;
  std::vector<int64_t> strides_, dilations_, pads_;
  bool relu_ = false;
};

// Y = Relu?(A + B), all three of one shape.
class ExampleAdd : public ExternKernel {
 public:
  explicit ExampleAdd(const PlanStep &step)
      : label_("step " + step.label + " (example.add)"), relu_(param_int(step, "relu") != 0) {}

  void run(const ExternCall &call) override {
    DISCO_CHECK(call.inputs.size() == 2 && call.outputs.size() == 1, label_, ": expects A, B and one output");
    const ExternTensor &a = call.inputs[0], &b = call.inputs[1], &y = call.outputs[0];
    for (const ExternTensor *t : {&a, &b, &y}) require_f32(*t, label_, "a tensor");
    DISCO_CHECK(a.shape == b.shape && a.shape == y.shape, label_, ": A ", shape_text(a.shape), ", B ",
                shape_text(b.shape), " and Y ", shape_text(y.shape), " must have one shape");
    const float *pa = static_cast<const float *>(a.data), *pb = static_cast<const float *>(b.data);
    float *py = static_cast<float *>(y.data);
    for (int64_t i = 0, n = y.num_elements(); i < n; ++i) py[i] = relu_ ? std::max(pa[i] + pb[i], 0.0f) : pa[i] + pb[i];
  }

 private:
  std::string label_;
  bool relu_;
};

}  // namespace

void install_example_runtime() {
  auto &registry = ExternKernelRegistry::global();
  registry.add("example.conv", [](const PlanStep &s) { return std::make_unique<ExampleConv>(s); });
  registry.add("example.add", [](const PlanStep &s) { return std::make_unique<ExampleAdd>(s); });
}

}  // namespace disco
