// "onednn.concat": ONNX Concat along the channels (axis 1) of 4-D and 5-D
// tensors, so that a network whose branches meet in a channel Concat
// (SqueezeNet's fire modules, DeepLab's ASPP, Inception and U-Net skips)
// keeps its activations in oneDNN's layout across it (onednn_layout.h)
// instead of copying every branch back to NCHW for a Halide Concat and the
// result back into the blocked layout for the next convolution.
//
// Each input is copied into its channel range of the result. Where the input
// and the result are both plain, or both blocked with whole blocks, that range
// is one contiguous run per image (C_i * spatial floats at offset
// first_channel * spatial): a memcpy, split between the step's threads
// from 2^18 floats on. Otherwise a oneDNN reorder writes the
// input into a sub-memory of the result.
//
// A BatchNormalization after the Concat, and a Relu after that (DenseNet's
// dense layers), come as the step's post-ops (onednn_rules.cc): y = x * a + b
// per channel, then max(y, 0). The contiguous copies apply them as they
// write; a reordered input's range gets them in place after its reorder, and
// a result held nhwc in one pass at the end.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "targets/onednn/float_copy.h"
#include "targets/onednn/onednn_cache.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/onednn_step.h"

namespace disco {

namespace {

using dnnl::memory;

// The post-ops of a Concat: per channel y = x * scale + shift, then a Relu
// where `relu`. Empty (no scale) when the step has none.
struct ChannelAffine {
  std::vector<float> scale, shift;
  bool relu = false;
  bool empty() const { return scale.empty(); }
  float at(int64_t c, float x) const {
    const float y = x * scale[c] + shift[c];
    return relu ? std::max(y, 0.0f) : y;
  }
};

// dst[i] = f(src[i]) for i in [0, n): element i lies at offset k = at + i of
// the result's image, so its channel is k / spatial (block 1: plain) or
// k / (spatial * block) * block + k % block (blocked; at and n then
// multiples of the block). dst may be src.
void affine_run(const ChannelAffine &f, float *dst, const float *src, int64_t at, int64_t n, int64_t spatial,
                int64_t block) {
  if (block == 1) {
    for (int64_t i = 0; i < n;) {
      const int64_t c = (at + i) / spatial, end = std::min(n, (c + 1) * spatial - at);
      const float a = f.scale[c], b = f.shift[c];
      if (f.relu)
        for (; i < end; ++i) dst[i] = std::max(src[i] * a + b, 0.0f);
      else
        for (; i < end; ++i) dst[i] = src[i] * a + b;
    }
    return;
  }
  for (int64_t i = 0; i < n; i += block) {
    const int64_t c = (at + i) / (spatial * block) * block;
    const float *a = &f.scale[c], *b = &f.shift[c];
    if (f.relu)
      for (int64_t l = 0; l < block; ++l) dst[i + l] = std::max(src[i + l] * a[l] + b[l], 0.0f);
    else
      for (int64_t l = 0; l < block; ++l) dst[i + l] = src[i + l] * a[l] + b[l];
  }
}

class ConcatKernel : public OnednnStep {
 public:
  explicit ConcatKernel(const PlanStep &step) : OnednnStep(step), cache_(kOnednnCacheCapacity) {
    kept_ = param_positions(step, "channels_last_inputs");
    kept_output_ = param_flag(step, "channels_last_output");
  }
  size_t cached_shapes() const override { return cache_.size(); }
  void run(const ExternCall &call) override;

 private:
  // How one input gets into the result.
  struct Part {
    // Its channels: `run` floats per image at `at` in the result's image (in
    // whole blocks where the result is blocked). Contiguous: a copy of them (float_copy.h).
    bool contiguous = false;
    int64_t run = 0, at = 0;
    memory src, dst;  // otherwise: a reorder into the result's sub-memory
    dnnl::reorder copy;
  };
  struct Entry {
    std::vector<Part> parts;
    int64_t image = 0;  // floats per image of the result
    std::string impl;
  };
  bool kept(size_t input) const { return std::find(kept_.begin(), kept_.end(), input) != kept_.end(); }
  Entry make_entry(const ExternCall &call, size_t inputs);
  ChannelAffine post_ops(const ExternCall &call, size_t inputs, const std::vector<int64_t> &dims);
  void clear_cache() override { cache_.clear(); }

  std::vector<size_t> kept_;  // step inputs the plan keeps channels last
  bool kept_output_ = false;
  ShapeLruCache<Entry> cache_;
};

ChannelAffine ConcatKernel::post_ops(const ExternCall &call, size_t inputs, const std::vector<int64_t> &dims) {
  ChannelAffine f;
  if (post_ops_.empty()) return f;
  const Epilogue e = epilogue(call, inputs, dims);
  const int64_t c = dims[1];
  f.scale.assign(static_cast<size_t>(c), 1.0f);
  f.shift.assign(static_cast<size_t>(c), 0.0f);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const OnednnPostOp &op = e.ops[i];
    if (op.kind == OnednnPostOp::Relu && op.a == 0 && i + 1 == e.ops.size()) {
      f.relu = true;
      continue;
    }
    const bool per_channel = op.num_operands() == 1 && e.operands[i].dims.size() == dims.size();
    check(per_channel && (op.kind == OnednnPostOp::Mul || op.kind == OnednnPostOp::Add),
          "has post-ops ", post_ops_to_string(post_ops_), "; a Concat takes a BatchNormalization and a Relu only");
    const float *v = e.operands[i].data;
    const bool one = e.operands[i].dims[1] == 1;
    for (int64_t k = 0; k < c; ++k) {
      const float x = v[one ? 0 : k];
      if (op.kind == OnednnPostOp::Mul) {
        f.scale[k] *= x;
        f.shift[k] *= x;
      } else {
        f.shift[k] += x;
      }
    }
  }
  return f;
}

ConcatKernel::Entry ConcatKernel::make_entry(const ExternCall &call, size_t inputs) {
  const ExternTensor &y = call.outputs[0];
  const memory::desc out = held_desc(y.shape, kept_output_);
  const bool out_blocked = kept_output_ && blocked(y.shape);
  const bool out_plain = !kept_output_ || same_order(y.shape);
  int64_t spatial = 1;
  for (size_t d = 2; d < y.shape.size(); ++d) spatial *= y.shape[d];
  Entry en;
  en.image = y.shape[1] * spatial;
  int64_t first = 0, copies = 0;
  for (size_t i = 0; i < inputs; ++i) {
    const std::vector<int64_t> &dims = call.inputs[i].shape;
    Part p;
    p.run = dims[1] * spatial;
    p.at = first * spatial;
    const bool in_blocked = kept(i) && blocked(dims), in_plain = !kept(i) || same_order(dims);
    if ((in_plain && out_plain) || (in_blocked && out_blocked && first % channel_block() == 0)) {
      p.contiguous = true;
    } else if (dims[1] > 0) {
      memory::dims offsets(dims.size(), 0);
      offsets[1] = first;
      check(!out_blocked || first % channel_block() == 0, "input ", i, " ", shape_text(dims), " starts at channel ",
            first, ", inside a block of the result's blocked layout");
      const auto &eng = onednn_engine();
      p.src = memory(held_desc(dims, kept(i)), eng, nullptr);
      p.dst = memory(out.submemory_desc(dims, offsets), eng, nullptr);
      auto pd = guarded("create a reorder", [&] { return dnnl::reorder::primitive_desc(p.src, p.dst); });
      made_primitive(pd);
      p.copy = dnnl::reorder(pd);
      en.impl += std::string(en.impl.empty() ? "" : ", ") + "reorder " + pd.impl_info_str();
      ++copies;
    }
    first += dims[1];
    en.parts.push_back(std::move(p));
  }
  if (copies < static_cast<int64_t>(en.parts.size())) en.impl = "memcpy" + (en.impl.empty() ? "" : ", " + en.impl);
  return en;
}

void ConcatKernel::run(const ExternCall &call) {
  size_t operands = 0;  // the post-ops' inputs, after the Concat's
  for (const OnednnPostOp &op : post_ops_) operands += static_cast<size_t>(op.num_operands());
  check(call.inputs.size() > operands, "expects at least one input");
  const size_t inputs = call.inputs.size() - operands;
  check(call.outputs.size() == 1 && call.outputs[0].dtype == DType::F32, "expects one float32 output");
  const ExternTensor &y = call.outputs[0];
  const size_t rank = y.shape.size();
  int64_t channels = 0;
  for (size_t i = 0; i < inputs; ++i) {
    const ExternTensor &x = input(call, i, "an input");
    bool fits = x.shape.size() == rank;
    for (size_t d = 0; fits && d < rank; ++d) fits = d == 1 || x.shape[d] == y.shape[d];
    check(fits, "input ", i, " ", shape_text(x.shape), " does not match the output ", shape_text(y.shape),
          " outside axis 1");
    channels += x.shape[1];
  }
  check(rank >= 3 && channels == y.shape[1], "the inputs' ", channels, " channels do not make the output ",
        shape_text(y.shape));
  if (y.num_elements() == 0) return;
  const std::vector<int64_t> key = shape_key(call);
  Entry *en = cache_.find(key);
  if (!en) en = &cache_.insert(key, make_entry(call, inputs));
  const ChannelAffine f = post_ops(call, inputs, y.shape);
  // Where the post-ops go: into the copies (plain or whole blocks), else one pass over an nhwc result.
  int64_t spatial = 1;
  for (size_t d = 2; d < rank; ++d) spatial *= y.shape[d];
  const bool plain = !kept_output_ || same_order(y.shape), nhwc = !plain && !blocked(y.shape);
  const int64_t block = plain ? 1 : channel_block();
  float *dst = static_cast<float *>(y.data);
  // Thread t of nt copies its share of every contiguous run, in whole
  // vectors of 16 floats. Split between the step's threads: the convolutions
  // before a Concat write their results in shares of memory by thread too,
  // so a thread copies much of what its own cache holds (squeezenet on two
  // threads 0.95-0.99x, benchmarks/results/concat-parallel-2026-12-05.md).
  auto copy_runs = [&](int t, int nt) {
    for (size_t i = 0; i < en->parts.size(); ++i) {
      const Part &p = en->parts[i];
      if (!p.contiguous || p.run == 0) continue;
      const float *src = static_cast<const float *>(call.inputs[i].data);
      const int64_t from = p.run * t / nt / 16 * 16, to = t + 1 == nt ? p.run : p.run * (t + 1) / nt / 16 * 16;
      for (int64_t n = 0; n < y.shape[0] && to > from; ++n) {
        float *out = dst + n * en->image + p.at;
        if (f.empty() || nhwc)
          copy_floats(out + from, src + n * p.run + from, to - from);
        else
          affine_run(f, out + from, src + n * p.run + from, p.at + from, to - from, spatial, block);
      }
    }
  };
  const int team = team_for_copy(y.num_elements());
  if (team > 1) {
#pragma omp parallel num_threads(team)
    copy_runs(omp_get_thread_num(), omp_get_num_threads());
  } else {
    copy_runs(0, 1);
  }
  for (size_t i = 0; i < en->parts.size(); ++i) {
    Part &p = en->parts[i];
    if (p.contiguous) continue;
    const float *src = static_cast<const float *>(call.inputs[i].data);
    if (!p.copy) continue;  // no channels
    p.src.set_data_handle(const_cast<float *>(src));
    p.dst.set_data_handle(dst);
    use_team(team_for_copy(call.inputs[i].num_elements()));
    execute(p.copy, {{DNNL_ARG_FROM, p.src}, {DNNL_ARG_TO, p.dst}});
    if (f.empty() || nhwc) continue;
    for (int64_t n = 0; n < y.shape[0]; ++n) {
      float *channels = dst + n * en->image + p.at;
      affine_run(f, channels, channels, p.at, p.run, spatial, block);
    }
  }
  if (!f.empty() && nhwc)
    for (int64_t k = 0; k < y.num_elements(); ++k) dst[k] = f.at(k % y.shape[1], dst[k]);
  ran(en->impl);
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_concat_kernel(const PlanStep &step) {
  return std::make_unique<ConcatKernel>(step);
}

}  // namespace disco
