// "onednn.conv": ONNX Conv (1-D to 3-D, groups, strides, dilations, explicit
// or SAME/VALID pads computed per run-time shape, optional bias) through
// oneDNN's forward-inference convolution. X and Y stay in ONNX's plain NC...
// layout; constant W is reordered once into the layout the primitive asks for.
#include <cstring>

#include "targets/onednn/onednn_cache.h"
#include "targets/onednn/onednn_step.h"

namespace disco {

namespace {

using dnnl::memory;

class ConvKernel : public OnednnStep {
 public:
  explicit ConvKernel(const PlanStep &step) : OnednnStep(step), cache_(kOnednnCacheCapacity) {
    strides_ = param_ints(step, "strides");
    dilations_ = param_ints(step, "dilations");
    pads_ = param_ints(step, "pads");
    group_ = param_int(step, "group");
    auto_pad_ = param_str(step, "auto_pad");
    check(!strides_.empty() && strides_.size() <= 3 && dilations_.size() == strides_.size() &&
              pads_.size() == 2 * strides_.size(),
          "strides, dilations and pads do not describe 1 to 3 spatial dims");
    check(group_ >= 1, "group must be positive");
    check(auto_pad_ == "NOTSET" || auto_pad_ == "VALID" || auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER",
          "unknown auto_pad '", auto_pad_, "'");
  }
  size_t cached_shapes() const override { return cache_.size(); }
  void run(const ExternCall &call) override;

 private:
  // Pads and output extents of one run.
  struct Geometry {
    memory::dims pad_begin, pad_end, strides, dilates;
    std::vector<int64_t> out;
  };
  struct Entry {
    dnnl::convolution_forward prim;
    memory src, wei, bias, dst;  // wei: the user's W, unused when `packed` is set
    std::vector<memory> operands;
    std::shared_ptr<memory> packed;
    std::unordered_map<int, memory> args;
    std::string impl;
  };
  Geometry geometry(const ExternTensor &x, const ExternTensor &w) const;
  Entry make_entry(const ExternTensor &x, const ExternTensor &w, const ExternTensor *bias, const Geometry &g,
                   const Epilogue &e);
  void clear_cache() override { cache_.clear(); }

  std::vector<int64_t> strides_, dilations_, pads_;
  int64_t group_ = 1;
  std::string auto_pad_;
  ShapeLruCache<Entry> cache_;
};

ConvKernel::Geometry ConvKernel::geometry(const ExternTensor &x, const ExternTensor &w) const {
  const size_t sp = strides_.size();
  Geometry g;
  g.out = {x.shape[0], w.shape[0]};
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x.shape[2 + i], s = strides_[i], span = dilations_[i] * (w.shape[2 + i] - 1) + 1;
    int64_t begin = pads_[i], end = pads_[i + sp];
    if (auto_pad_ == "VALID") begin = end = 0;
    if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
      begin = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    }
    check(in + begin + end >= span, "spatial dim ", i, " of X ", shape_text(x.shape), " is too small for the window (",
          span, " with pads ", begin, " and ", end, ")");
    g.out.push_back((in + begin + end - span) / s + 1);
    g.pad_begin.push_back(begin);
    g.pad_end.push_back(end);
    g.strides.push_back(s);
    g.dilates.push_back(dilations_[i] - 1);  // oneDNN counts the gaps
  }
  return g;
}

ConvKernel::Entry ConvKernel::make_entry(const ExternTensor &x, const ExternTensor &w, const ExternTensor *bias,
                                         const Geometry &g, const Epilogue &e) {
  memory::dims wdims = w.shape;
  if (group_ > 1) {  // [M, C/g, k...] is [g, M/g, C/g, k...] in the same bytes
    wdims[0] /= group_;
    wdims.insert(wdims.begin(), group_);
  }
  const memory::desc src = plain_desc(x.shape), user_wei = plain_desc(wdims), dst = plain_desc(g.out);
  const memory::desc wei =
      w.constant ? memory::desc(wdims, memory::data_type::f32, memory::format_tag::any) : user_wei;
  std::vector<memory::desc> operands;
  for (const auto &o : e.operands) operands.push_back(plain_desc(o.dims));
  dnnl::primitive_attr attr;
  attr.set_post_ops(e.to_dnnl(operands));
  auto pd = guarded("create a convolution primitive", [&] {
    using dnnl::convolution_forward;
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    auto d = bias ? convolution_forward::desc(prop, alg, src, wei, plain_desc(bias->shape), dst, g.strides, g.dilates,
                                              g.pad_begin, g.pad_end)
                  : convolution_forward::desc(prop, alg, src, wei, dst, g.strides, g.dilates, g.pad_begin, g.pad_end);
    return convolution_forward::primitive_desc(d, attr, onednn_engine());
  });
  made_primitive(pd);
  const auto &eng = onednn_engine();
  Entry en;
  en.prim = dnnl::convolution_forward(pd);
  en.impl = pd.impl_info_str();
  en.src = memory(src, eng, nullptr);
  en.dst = memory(dst, eng, nullptr);
  en.wei = memory(user_wei, eng, nullptr);
  if (w.constant && pd.weights_desc() != user_wei) en.packed = packed_weights(user_wei, w.data, pd.weights_desc());
  en.args = {{DNNL_ARG_SRC, en.src}, {DNNL_ARG_WEIGHTS, en.packed ? *en.packed : en.wei}, {DNNL_ARG_DST, en.dst}};
  if (bias) {
    en.bias = memory(plain_desc(bias->shape), eng, nullptr);
    en.args[DNNL_ARG_BIAS] = en.bias;
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    en.operands.emplace_back(operands[i], eng, nullptr);
    en.args[e.operand_arg(i)] = en.operands.back();
  }
  return en;
}

void ConvKernel::run(const ExternCall &call) {
  use_threads();
  const ExternTensor &x = input(call, 0, "X"), &w = input(call, 1, "W");
  const ExternTensor *bias = call.inputs.size() > 2 && call.inputs[2].dtype != DType::Undefined ? &input(call, 2, "bias") : nullptr;
  check(call.outputs.size() == 1 && call.outputs[0].dtype == DType::F32, "expects one float32 output");
  const ExternTensor &y = call.outputs[0];
  const size_t rank = strides_.size() + 2;
  check(x.shape.size() == rank && w.shape.size() == rank, "X ", shape_text(x.shape), " and W ", shape_text(w.shape),
        " must have rank ", rank);
  const int64_t c = x.shape[1], m = w.shape[0];
  check(c == w.shape[1] * group_, "X ", shape_text(x.shape), " has ", c, " channels, W ", shape_text(w.shape),
        " with group ", group_, " expects ", w.shape[1] * group_);
  check(m % group_ == 0, "W's ", m, " output channels are not divisible by group ", group_);
  if (bias) check(bias->shape == std::vector<int64_t>{m}, "bias is ", shape_text(bias->shape), ", expected [", m, "]");
  const Geometry g = geometry(x, w);
  check(y.shape == g.out, "output is ", shape_text(y.shape), ", expected ", shape_text(g.out));
  if (y.num_elements() == 0) return;
  Epilogue e = epilogue(call, 3, g.out);
  float *dst = static_cast<float *>(y.data);
  if (c == 0) {  // no input channels: the bias, then the epilogue
    const int64_t inner = y.num_elements() / (g.out[0] * m);
    for (int64_t i = 0; i < y.num_elements(); ++i)
      dst[i] = bias ? static_cast<const float *>(bias->data)[(i / inner) % m] : 0.0f;
    apply_post_ops_scalar(dst, g.out, e.ops, e.operands);
    return;
  }
  const std::vector<int64_t> key = shape_key(call);
  Entry *en = cache_.find(key);
  if (!en) en = &cache_.insert(key, make_entry(x, w, bias, g, e));
  en->src.set_data_handle(x.data);
  en->dst.set_data_handle(dst);
  if (!en->packed) en->wei.set_data_handle(w.data);
  if (bias) en->bias.set_data_handle(bias->data);
  for (size_t i = 0; i < en->operands.size(); ++i)
    en->operands[i].set_data_handle(const_cast<float *>(e.operands[i].data));
  execute(en->prim, en->args);
  ran(en->impl);
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_conv_kernel(const PlanStep &step) {
  return std::make_unique<ConvKernel>(step);
}

}  // namespace disco
