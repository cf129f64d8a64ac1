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
    std::vector<int64_t> kept;
    if (has_param(step, "channels_last_inputs")) kept = param_ints(step, "channels_last_inputs");
    for (int64_t i : kept) check(i == 0 || i == 1, "channels_last_inputs names input ", i, " of two");
    x_kept_ = std::find(kept.begin(), kept.end(), 0) != kept.end();
    y_kept_ = has_param(step, "channels_last_output") && param_int(step, "channels_last_output") != 0;
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
  en.args = {{DNNL_ARG_SRC_0, en.x.inner}, {DNNL_ARG_SRC_1, en.s}, {DNNL_ARG_DST, en.y.inner}};
  return en;
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
  execute(en->prim, en->args);
  if (en->y.copied) execute(en->y.copy, {{DNNL_ARG_FROM, en->y.inner}, {DNNL_ARG_TO, en->y.user}});
  ran(en->impl);
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_binary_kernel(const PlanStep &step) {
  return std::make_unique<BinaryKernel>(step);
}

}  // namespace disco
