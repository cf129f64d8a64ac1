// "onednn.binary": a squeeze-excitation's Mul (or Add) of a 4-D or 5-D
// tensor X by a per-channel S ([N or 1, C, 1, 1]) through oneDNN's binary
// primitive, with X and the result channels last (onednn_layout.h). In
// EfficientNet and MobileNetV3 that Mul sits between a depthwise conv and the
// next 1x1 conv; on the host it made X leave the blocked layout (and the
// pooling that computes S read it back in), for a copy's worth of work.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "targets/onednn/onednn_cache.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/onednn_step.h"

namespace disco {

namespace {

using dnnl::memory;

class BinaryKernel : public OnednnStep {
 public:
  explicit BinaryKernel(const PlanStep &step) : OnednnStep(step), cache_(kOnednnCacheCapacity) {
    const std::string alg = param_str(step, "algorithm");
    check(alg == "mul" || alg == "add", "unknown binary algorithm '", alg, "'");
    algorithm_ = alg == "mul" ? dnnl::algorithm::binary_mul : dnnl::algorithm::binary_add;
    const std::vector<size_t> kept = param_positions(step, "channels_last_inputs");
    for (size_t i : kept) check(i <= 1, "channels_last_inputs names input ", i, " of two");
    x_kept_ = std::find(kept.begin(), kept.end(), size_t{0}) != kept.end();
    y_kept_ = param_flag(step, "channels_last_output");
  }
  size_t cached_shapes() const override { return cache_.size(); }
  void run(const ExternCall &call) override;

 private:
  struct Entry {
    dnnl::binary prim;
    Staged x, y;
    memory s;  // one position per channel: the same bytes in every layout
    std::unordered_map<int, memory> args;
    std::string impl;
    bool own_loop = false;  // oneDNN offered only its reference kernel: channels_last_loop() instead
  };
  Entry make_entry(const std::vector<int64_t> &x, const std::vector<int64_t> &s);
  void clear_cache() override { cache_.clear(); }

  dnnl::algorithm algorithm_ = dnnl::algorithm::binary_mul;
  bool x_kept_ = false, y_kept_ = false;
  ShapeLruCache<Entry> cache_;
  Scratch scratch_[2];  // X, Y
};

BinaryKernel::Entry BinaryKernel::make_entry(const std::vector<int64_t> &x, const std::vector<int64_t> &s) {
  const auto &eng = onednn_engine();
  Entry en;
  en.x = Staged::make(x, false, x_kept_);
  en.y = Staged::make(x, true, y_kept_);
  // S as plain, then as X's layout: 2.6's JIT binary kernels broadcast per
  // channel for some pairs of layouts and not others.
  for (const memory::desc &sd : {plain_desc(s), channels_last_desc(s)}) {
    auto pd = guarded("create a binary primitive", [&] {
      return dnnl::binary::primitive_desc(
          dnnl::binary::desc(algorithm_, en.x.inner.get_desc(), sd, en.y.inner.get_desc()), eng);
    });
    en.impl = std::string("binary ") + pd.impl_info_str();
    en.s = memory(sd, eng, nullptr);
    en.prim = dnnl::binary(pd);
    made_primitive(pd);
    if (en.impl.find("ref") == std::string::npos) break;
  }
  // On AVX-512 hosts oneDNN 2.6 had only ref:any for every squeeze-excitation
  // Mul of EfficientNet and MobileNetV3 (measured: the whole model at 15x ONNX
  // Runtime's time). X and Y are channels last in `inner` and S is one value
  // per channel, so a loop over channels does the job at copy speed
  // (channels_last_desc is nhwc, or nChw8c/16c where the channels fill the blocks).
  if (en.impl.find("ref") != std::string::npos) {
    en.own_loop = true;
    en.impl = "binary disco channels-last loop";
  }
  en.args = {{DNNL_ARG_SRC_0, en.x.inner}, {DNNL_ARG_SRC_1, en.s}, {DNNL_ARG_DST, en.y.inner}};
  return en;
}

// y = x (*|+) s[n or 0, c], X and Y in channels_last_desc's layout: blocked
// (N, C / block, positions, block) where `blocked`, else
// (N, positions, C). Each row is `width` channels starting at channel c0.
void channels_last_loop(const float *x, const float *s, float *y, int64_t batch, int64_t positions, int64_t channels,
                        bool is_blocked, bool s_per_batch, bool mul) {
  const int64_t width = is_blocked ? channel_block() : channels;
  const int64_t blocks = channels / width, rows = batch * blocks * positions;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / (blocks * positions), c0 = is_blocked ? (r / positions) % blocks * width : 0;
    const float *sc = s + (s_per_batch ? n * channels : 0) + c0;
    const float *xr = x + r * width;
    float *yr = y + r * width;
    if (mul)
      for (int64_t c = 0; c < width; ++c) yr[c] = xr[c] * sc[c];
    else
      for (int64_t c = 0; c < width; ++c) yr[c] = xr[c] + sc[c];
  }
}

void BinaryKernel::run(const ExternCall &call) {
  const ExternTensor &x = input(call, 0, "X"), &s = input(call, 1, "S");
  check(call.outputs.size() == 1 && call.outputs[0].dtype == DType::F32, "expects one float32 output");
  const ExternTensor &y = call.outputs[0];
  const size_t rank = x.shape.size();
  bool per_channel = rank >= 3 && s.shape.size() == rank && (s.shape[0] == 1 || s.shape[0] == x.shape[0]) &&
                     s.shape[1] == x.shape[1];
  for (size_t d = 2; per_channel && d < rank; ++d) per_channel = s.shape[d] == 1;
  check(per_channel, "S ", shape_text(s.shape), " is not one value per channel of X ", shape_text(x.shape));
  check(y.shape == x.shape, "output is ", shape_text(y.shape), ", expected X's ", shape_text(x.shape));
  if (y.num_elements() == 0) return;
  use_team(team_for_copy(x.num_elements()));
  const std::vector<int64_t> key = shape_key(call);
  Entry *en = cache_.find(key);
  if (!en) en = &cache_.insert(key, make_entry(x.shape, s.shape));
  en->x.bind(x.data, scratch_[0]);
  en->y.bind(y.data, scratch_[1]);
  en->s.set_data_handle(s.data);
  if (en->x.copied) execute(en->x.copy, {{DNNL_ARG_FROM, en->x.user}, {DNNL_ARG_TO, en->x.inner}});
  if (en->own_loop) {
    int64_t positions = 1;
    for (size_t d = 2; d < rank; ++d) positions *= x.shape[d];
    channels_last_loop(static_cast<const float *>(en->x.inner.get_data_handle()), static_cast<const float *>(s.data),
                       static_cast<float *>(en->y.inner.get_data_handle()), x.shape[0], positions, x.shape[1],
                       blocked(x.shape), s.shape[0] != 1, algorithm_ == dnnl::algorithm::binary_mul);
  } else {
    execute(en->prim, en->args);
  }
  if (en->y.copied) execute(en->y.copy, {{DNNL_ARG_FROM, en->y.inner}, {DNNL_ARG_TO, en->y.user}});
  ran(en->impl);
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_binary_kernel(const PlanStep &step) {
  return std::make_unique<BinaryKernel>(step);
}

}  // namespace disco
