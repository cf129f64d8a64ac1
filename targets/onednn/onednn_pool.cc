// "onednn.pool": ONNX MaxPool, AveragePool, GlobalMaxPool and
// GlobalAveragePool (1-D to 3-D) through oneDNN's forward-inference pooling,
// channels last (onednn_layout.h), so that a network of convolutions and
// poolings keeps its activations in one layout from end to end.
//
// The output extents come from the plan (ONNX's rules, ceil_mode included);
// the end pads are whatever makes oneDNN produce exactly those: padding is
// never read by max pooling, and average pooling counts it only where ONNX
// does (the rules leave count_include_pad with ceil_mode to the next backend).
// 2-D max pooling of blocked tensors on AVX2 CPUs runs disco's own loop
// (max_pool_avx2.h), 3x faster than 2.6's jit:avx2 pooling.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "targets/onednn/ab_switch.h"
#include "targets/onednn/max_pool_avx2.h"
#include "targets/onednn/onednn_cache.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/onednn_step.h"

namespace disco {

namespace {

using dnnl::memory;

class PoolKernel : public OnednnStep {
 public:
  explicit PoolKernel(const PlanStep &step) : OnednnStep(step), cache_(kOnednnCacheCapacity) {
    const std::string alg = param_str(step, "algorithm");
    check(alg == "max" || alg == "avg_include" || alg == "avg_exclude", "unknown pooling algorithm '", alg, "'");
    algorithm_ = alg == "max"           ? dnnl::algorithm::pooling_max
                 : alg == "avg_include" ? dnnl::algorithm::pooling_avg_include_padding
                                        : dnnl::algorithm::pooling_avg_exclude_padding;
    global_ = param_int(step, "global") != 0;
    if (!global_) {
      kernel_ = param_ints(step, "kernel_shape");
      strides_ = param_ints(step, "strides");
      dilations_ = param_ints(step, "dilations");
      pads_ = param_ints(step, "pads");
      auto_pad_ = param_str(step, "auto_pad");
      const size_t sp = kernel_.size();
      check(sp >= 1 && sp <= 3 && strides_.size() == sp && dilations_.size() == sp && pads_.size() == 2 * sp,
            "kernel_shape, strides, dilations and pads do not describe 1 to 3 spatial dims");
      for (size_t i = 0; i < sp; ++i)
        check(kernel_[i] >= 1 && strides_[i] >= 1 && dilations_[i] >= 1 && pads_[i] >= 0 && pads_[sp + i] >= 0,
              "kernel_shape, strides and dilations must be positive and pads not negative");
      check(auto_pad_ == "NOTSET" || auto_pad_ == "VALID" || auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER",
            "unknown auto_pad '", auto_pad_, "'");
    }
    channels_last_input_ = !param_positions(step, "channels_last_inputs").empty();
    channels_last_output_ = param_flag(step, "channels_last_output");
  }
  size_t cached_shapes() const override { return cache_.size(); }
  void run(const ExternCall &call) override;

 private:
  struct Entry {
    dnnl::primitive prim;  // null when `own` runs it
    Staged src, dst;
    std::unordered_map<int, memory> args;
    std::string impl;
    // 2-D max pooling, and global average pooling, on blocked X and Y with
    // an AVX2 CPU: max_pool_avx2.h's loops instead of the primitive (x and y
    // set per run).
    enum class Own { None, Max, GlobalAverage } own = Own::None;
    BlockedMaxPool pool;
  };
  Entry make_entry(const std::vector<int64_t> &x, const std::vector<int64_t> &y);
  void clear_cache() override { cache_.clear(); }

  dnnl::algorithm algorithm_ = dnnl::algorithm::pooling_max;
  bool global_ = false;
  std::vector<int64_t> kernel_, strides_, dilations_, pads_;
  std::string auto_pad_;
  bool channels_last_input_ = false, channels_last_output_ = false;
  ShapeLruCache<Entry> cache_;
  Scratch scratch_[2];  // X, Y
};

PoolKernel::Entry PoolKernel::make_entry(const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  const size_t sp = x.size() - 2;
  memory::dims kernel, strides, dilation, pad_l, pad_r;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x[2 + i], out = y[2 + i];
    const int64_t k = global_ ? in : kernel_[i], s = global_ ? 1 : strides_[i], d = global_ ? 1 : dilations_[i];
    const int64_t span = d * (k - 1) + 1;
    int64_t begin = global_ ? 0 : pads_[i];
    if (auto_pad_ == "VALID") begin = 0;
    if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
      begin = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    // The end pad that makes the last window the plan's last one.
    const int64_t end = std::max<int64_t>(0, (out - 1) * s + span - in - begin);
    check(in + begin + end >= span && (in + begin + end - span) / s + 1 == out, "spatial dim ", i, " of X ",
          shape_text(x), " cannot give the output ", shape_text(y), " with window ", span, ", stride ", s,
          " and begin pad ", begin);
    check(begin < span && end < span, "spatial dim ", i, " of the output ", shape_text(y),
          " has windows that read padding only");
    kernel.push_back(k);
    strides.push_back(s);
    dilation.push_back(d - 1);  // oneDNN counts the gaps
    pad_l.push_back(begin);
    pad_r.push_back(end);
  }
  Entry en;
  en.src = Staged::make(x, false, channels_last_input_);
  en.dst = Staged::make(y, true, channels_last_output_);
  const bool undilated = std::all_of(dilation.begin(), dilation.end(), [](int64_t d) { return d == 0; });
  // disco's own loop (max_pool_avx2.h) over blocked X and Y.
  auto own = [&](Entry::Own kind, const char *impl) {
    en.own = kind;
    en.pool.block = channel_block();
    en.pool.ih = x[2], en.pool.iw = x[3], en.pool.oh = y[2], en.pool.ow = y[3];
    en.impl = impl;
    made_own_kernel();
    return en;
  };
  // The primitive's side of X and Y is channels_last_desc (Staged::make), so
  // both are blocked exactly when X's channels (Y's too) fill the blocks.
  if (algorithm_ == dnnl::algorithm::pooling_max && sp == 2 && undilated && max_pool_avx2_cpu() && blocked(x)) {
    en.pool.kh = kernel[0], en.pool.kw = kernel[1], en.pool.sh = strides[0], en.pool.sw = strides[1];
    en.pool.pad_top = pad_l[0], en.pool.pad_left = pad_l[1];
    return own(Entry::Own::Max, "max pooling blocked avx2");
  }
  const bool average = algorithm_ == dnnl::algorithm::pooling_avg_exclude_padding ||
                       algorithm_ == dnnl::algorithm::pooling_avg_include_padding;
  if (global_ && average && sp == 2 && max_pool_avx2_cpu() && blocked(x) && y[2] == 1 && y[3] == 1 &&
      !switched_off("DISCO_OWN_GLOBAL_AVG"))
    return own(Entry::Own::GlobalAverage, "global average pooling blocked avx2");
  auto pd = guarded("create a pooling primitive", [&] {
    return dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, algorithm_, en.src.inner.get_desc(),
                                       en.dst.inner.get_desc(), strides, kernel, dilation, pad_l, pad_r),
        onednn_engine());
  });
  made_primitive(pd);
  en.prim = dnnl::pooling_v2_forward(pd);
  en.impl = std::string("pooling ") + pd.impl_info_str();
  en.args = {{DNNL_ARG_SRC, en.src.inner}, {DNNL_ARG_DST, en.dst.inner}};
  return en;
}

void PoolKernel::run(const ExternCall &call) {
  const ExternTensor &x = input(call, 0, "X");
  check(call.outputs.size() == 1 && call.outputs[0].dtype == DType::F32, "expects one float32 output");
  ExternTensor y = call.outputs[0];
  const size_t rank = x.shape.size();
  check(rank >= 3 && rank <= 5 && (global_ || rank == kernel_.size() + 2), "X ", shape_text(x.shape),
        " does not fit the pooling's spatial rank");
  // A global pool's [N, C] result (ReduceMean over the spatial dims without
  // keepdims) is its [N, C, 1, ...] in every layout.
  if (global_ && y.shape.size() == 2) y.shape.resize(rank, 1);
  check(y.shape.size() == rank && y.shape[0] == x.shape[0] && y.shape[1] == x.shape[1], "output is ",
        shape_text(call.outputs[0].shape), ", expected [", x.shape[0], ", ", x.shape[1], ", ...] for X ",
        shape_text(x.shape));
  if (y.num_elements() == 0) return;
  check(x.num_elements() > 0, "X ", shape_text(x.shape), " is empty but the output ", shape_text(y.shape), " is not");
  use_team(team_for_copy(x.num_elements()));
  std::vector<int64_t> key = shape_key(call);
  key.insert(key.end(), y.shape.begin(), y.shape.end());
  Entry *en = cache_.find(key);
  if (!en) en = &cache_.insert(key, make_entry(x.shape, y.shape));
  en->src.bind(x.data, scratch_[0]);
  en->dst.bind(y.data, scratch_[1]);
  if (en->src.copied) execute(en->src.copy, {{DNNL_ARG_FROM, en->src.user}, {DNNL_ARG_TO, en->src.inner}});
  if (en->own != Entry::Own::None) {
    BlockedMaxPool p = en->pool;
    p.x = static_cast<const float *>(en->src.inner.get_data_handle());
    p.y = static_cast<float *>(en->dst.inner.get_data_handle());
    const int64_t rows = y.shape[0] * (y.shape[1] / p.block) * p.oh;
    const int team = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), rows));
    auto pool_rows = [&](int64_t first, int64_t last) {
      if (en->own == Entry::Own::GlobalAverage)
        global_avg_pool_blocked_avx2(p, first, last);
      else
        max_pool_blocked_avx2(p, first, last);
    };
    if (team <= 1) {
      pool_rows(0, rows);
    } else {
#pragma omp parallel num_threads(team)
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        pool_rows(rows * t / nt, rows * (t + 1) / nt);
      }
    }
  } else {
    execute(en->prim, en->args);
  }
  if (en->dst.copied) execute(en->dst.copy, {{DNNL_ARG_FROM, en->dst.inner}, {DNNL_ARG_TO, en->dst.user}});
  ran(en->impl);
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_pool_kernel(const PlanStep &step) {
  return std::make_unique<PoolKernel>(step);
}

}  // namespace disco
