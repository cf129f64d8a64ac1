// "onednn.conv": ONNX Conv (1-D to 3-D, groups, strides, dilations, explicit
// or SAME/VALID pads computed per run-time shape, optional bias) through
// oneDNN's forward-inference convolution, channels last (onednn_layout.h).
// Constant W is reordered once into the layout the primitive asks for. A
// residual Add of the result's full shape becomes a sum post-op over a
// destination that starts as the residual: with a binary post-op instead,
// 2.6 picks a slower convolution (jit rather than brgconv, 6.1 vs 4.3 ms on
// convnet's 8x32x64x64 3x3 block).
// Taps of the window that read only padding at a run's shape are cropped from
// a constant W before the primitive is made (geometry, crop_taps): DeepLab's ASPP
// convs (3x3, dilations 12, 24, 36) on a 14x14 map are 1x1 convs in all but
// name, and 2.6 runs dilated convs on its im2col gemm, which multiplies the
// padding's zeros too. Where the taps that read X change along the output
// (the same convs on a larger map), the output is cut into boxes that read
// no padding, each its own convolution (conv_regions.h), or, where that
// streams less of W, summed tap by tap over each tap's box of outputs.
// A 2-D convolution's result that only a Transpose to channels last reads
// (convnext's depthwise conv, permuted to [N, H, W, C] for its LayerNorm) is
// written as that Transpose's result ("out_perm" 0,2,3,1): the staged result
// is reordered into nhwc rather than into NCHW, and the host kernel after it
// reads whole rows of channels instead of gathering them a plane apart.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "targets/onednn/ab_switch.h"
#include "targets/onednn/conv_regions.h"
#include "targets/onednn/conv_winograd.h"
#include "targets/onednn/eltwise_tail.h"
#include "targets/onednn/float_copy.h"
#include "targets/onednn/onednn_cache.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/onednn_step.h"
#include "targets/onednn/onednn_view.h"
#include "targets/onednn/onednn_weights.h"

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
    channels_last_inputs_ = param_positions(step, "channels_last_inputs");
    channels_last_output_ = param_flag(step, "channels_last_output");
    padded_inputs_ = param_positions(step, "padded_inputs");
    padded_output_ = param_flag(step, "padded_output");
    check(!padded_output_ || channels_last_output_, "padded_output without channels_last_output");
    if (has_param(step, "out_perm") && !param_ints(step, "out_perm").empty()) {
      check(param_ints(step, "out_perm") == kToChannelsLast && strides_.size() == 2 && !channels_last_output_,
            "out_perm ", shape_text(param_ints(step, "out_perm")),
            " is not a 2-D convolution's result to channels last");
      out_channels_last_ = true;
    }
    if (strides_.size() == 1) {  // run as 2-D over [N, C, 1, L] (run)
      lifted_ = true;
      strides_.insert(strides_.begin(), 1);
      dilations_.insert(dilations_.begin(), 1);
      pads_ = {0, pads_[0], 0, pads_[1]};
    }
  }
  size_t cached_shapes() const override { return cache_.size(); }
  void run(const ExternCall &call) override;

 private:
  void run_spatial(const ExternCall &call);
  // Pads and output extents of one run.
  struct Geometry {
    memory::dims pad_begin, pad_end, strides, dilates;
    std::vector<int64_t> out;
    // The window's taps that read some of X, per spatial dim: [first, first + count).
    std::vector<int64_t> tap_first, taps;
    bool cropped = false;  // some tap reads only padding and is left out
  };
  struct Entry {
    dnnl::convolution_forward prim;
    Staged src, dst;
    std::vector<Staged> operands;   // per epilogue operand; only those of binary post-ops are bound and used
    std::vector<size_t> binary;     // which operands the binary post-ops read
    int sum = -1;                   // the operand dst starts as (Epilogue::lower), or -1
    Staged sum_user;                // that operand in disco's buffer
    dnnl::reorder sum_copy;         // its user layout -> dst.inner; unused when the bytes can be copied as they are
    memory wei, bias;                // disco's W and bias
    memory wei_inner;                // W in the primitive's layout, for W that is not constant
    dnnl::reorder wei_copy;          // wei -> wei_inner, when W is not constant and the layouts differ
    std::shared_ptr<memory> packed;  // constant W in the primitive's layout
    std::unordered_map<int, memory> args;
    std::string impl;
    // Set when the primitive is made for one image and runs once per image
    // (WinogradUse::kPerImage): each argument that has a dim of images is
    // bound in args as `one`, pointed at image i of `whole` for run i.
    struct ImageArg {
      memory whole, one;
      size_t bytes = 0;  // one image's bytes
    };
    int64_t images = 1;
    std::vector<ImageArg> image_args;
    // Set when the output is computed in boxes that read no padding
    // (conv_regions.h): each box's X window is copied out of the staged X, the
    // box's primitive runs, and its result is copied into the staged Y.
    // Boxes by tap (tap_boxes) add their sums into Y: it starts at zero, each
    // partial box's copy out adds to it, and the box that covers all of Y
    // runs last, on the staged X and Y themselves where its window is all
    // of X, with a sum post-op, the bias and the epilogue.
    struct Box {
      dnnl::convolution_forward prim;
      memory src_view, src, dst, dst_view, bias;  // views into the staged X and Y; the box's own X and Y
      dnnl::reorder in, out;
      bool staged_src = false, staged_dst = false;  // reads the staged X / writes the staged Y (no copy)
      std::shared_ptr<memory> packed;
      std::unordered_map<int, memory> args;
    };
    std::vector<Box> boxes;
    bool zero_dst = false;  // boxes by tap: Y is zeroed before they run
    // Set when X is copied into the interior of a buffer with zero borders
    // and the primitive runs without pads (make_padded). Owned by the entry,
    // so that its borders stay zero between runs.
    std::vector<float> padded;
  };
  Geometry geometry(const ExternTensor &x, const ExternTensor &w) const;
  // `team`: the threads that run it (the layouts tried depend on it).
  Entry make_entry(const ExternTensor &x, const ExternTensor &w, const ExternTensor *bias, const Geometry &g,
                   const Epilogue &e, int team);
  // One try of make_entry, with the primitive seeing X and Y in these layouts
  // and W (dims `wdims`, bytes at `wdata`) cropped to the geometry's taps.
  // `per_image`: the primitive is made for one image and runs once per image (Entry::images).
  Entry make_entry_in(const ExternTensor &x, const ExternTensor &w, const void *wdata, const ExternTensor *bias,
                      const Geometry &g, const Epilogue &e, const memory::dims &wdims, const memory::desc &src_desc,
                      const memory::desc &dst_desc,
                      dnnl::algorithm alg = dnnl::algorithm::convolution_direct, bool per_image = false);
  // Runs the entry's primitive: once, or once per image.
  void execute_images(Entry &en);
  // Sets `en` to the convolution as Winograd (conv_winograd.h) and returns
  // true where the rule says it pays and oneDNN has a Winograd kernel for it;
  // else false, `en` unchanged. Tried before any direct primitive is made.
  bool make_winograd(const ExternTensor &x, const ExternTensor &w, const void *wdata, const ExternTensor *bias,
                     const Geometry &g, const Epilogue &e, const memory::dims &wdims, int team, Entry &en);
  memory::dims grouped(memory::dims wdims) const;
  // Whether the convolution reads X in non-overlapping windows (see the definition).
  bool patches(const ExternTensor &w, const Geometry &g) const;
  // make_entry_in's entry with X copied into a zero-bordered buffer and no pads.
  Entry make_padded(const ExternTensor &x, const ExternTensor &w, const void *wdata, const ExternTensor *bias,
                    const Geometry &g, const Epilogue &e, const memory::dims &wdims);
  // Sets `en`'s boxes from its staged X and Y; false where they would not pay or oneDNN has no JIT kernel for one.
  // `by_tap_ok`: boxes by tap may be tried (tap_boxes); where they cannot be made, the padding-free ones are.
  bool make_boxes(const ExternTensor &x, const ExternTensor &w, const ExternTensor *bias, const Geometry &g,
                  const Epilogue &e, Entry &en, bool by_tap_ok = true);
  // Cropped W is a temporary copy: packed by its content (onednn_weights.h),
  // never through packed_weights, which knows weights by their address.
  std::shared_ptr<memory> pack_copy(const memory::desc &user, const void *data, const memory::desc &want) {
    dnnl::stream stream(onednn_engine());
    return guarded("reorder the cropped weights", [&] { return shared_packed_weights(user, data, want, stream); });
  }
  bool channels_last(size_t input) const {
    return std::find(channels_last_inputs_.begin(), channels_last_inputs_.end(), input) != channels_last_inputs_.end();
  }
  bool padded(size_t input) const {
    return std::find(padded_inputs_.begin(), padded_inputs_.end(), input) != padded_inputs_.end();
  }
  // Step input `input` of `dims` as disco's buffer holds it.
  memory::desc user_desc(size_t input, const memory::dims &dims) const {
    return held_desc(dims, channels_last(input), padded(input));
  }
  void clear_cache() override { cache_.clear(); }

  std::vector<int64_t> strides_, dilations_, pads_;
  int64_t group_ = 1;
  std::string auto_pad_;
  std::vector<size_t> channels_last_inputs_;  // step inputs the plan keeps channels last (onednn_layout.h)
  bool channels_last_output_ = false;
  std::vector<size_t> padded_inputs_;  // those of them it holds padded (onednn_layout.h)
  bool padded_output_ = false;
  // The result is written transposed to [N, H, W, C] (out_perm 0,2,3,1).
  static inline const std::vector<int64_t> kToChannelsLast = {0, 2, 3, 1};
  bool out_channels_last_ = false;
  // Y as disco's buffer holds it, around the primitive's `inner` layout.
  Staged staged_dst(const memory::dims &out, const memory::desc &inner) const {
    const memory::desc user =
        out_channels_last_ ? unblocked_desc(out) : held_desc(out, channels_last_output_, padded_output_);
    return Staged::make_as(user, true, inner);
  }
  bool lifted_ = false;  // a 1-D conv, its attributes made 2-D (run)
  ShapeLruCache<Entry> cache_;
  // Staging memory shared by all cache entries (one runs at a time): X, Y, W, then one per operand.
  std::vector<Scratch> scratch_;
  Scratch box_scratch_[2];  // a box's X and Y
  std::vector<Scratch> alias_copies_;  // per operand: one read from Y's own memory (run)
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
    const int64_t out = (in + begin + end - span) / s + 1, k = w.shape[2 + i], d = dilations_[i];
    g.out.push_back(out);
    g.pad_begin.push_back(begin);
    g.pad_end.push_back(end);
    g.strides.push_back(s);
    g.dilates.push_back(d - 1);  // oneDNN counts the gaps
    // Tap t reads X at o * s - begin + t * d for o in [0, out): some of X unless
    // all of that lies before 0 or past in - 1. Live taps are one run of t.
    auto live = [&](int64_t t) { return (out - 1) * s - begin + t * d >= 0 && t * d - begin <= in - 1; };
    int64_t first = 0, last = k;
    while (first < k && !live(first)) ++first;
    while (last > first && !live(last - 1)) --last;
    // The cropped window's pads: the first live tap at o = 0 reads X at -pad
    // begin, and the last output's window ends where it did. A pad below 0
    // (a window that starts inside X) is left to the uncropped conv.
    const int64_t new_begin = begin - first * d, new_span = last > first ? d * (last - first - 1) + 1 : 0;
    int64_t new_end = (out - 1) * s + new_span - in - new_begin;
    if (new_end < 0 && new_end + s - 1 >= 0) new_end = 0;  // the output count rounds down: up to s - 1 more is the same
    if (!w.constant || last == first || (first == 0 && last == k) || new_begin < 0 || new_end < 0) {
      g.tap_first.push_back(0);
      g.taps.push_back(k);
      continue;
    }
    g.tap_first.push_back(first);
    g.taps.push_back(last - first);
    g.pad_begin.back() = new_begin;
    g.pad_end.back() = new_end;
    if (last - first == 1) g.dilates.back() = 0;  // one tap has no gaps; JIT 1x1 kernels take no dilation
    g.cropped = true;
  }
  return g;
}

// W [M, C/g, k...] with only the taps [first, first + count) of each spatial dim, dense.
std::vector<float> crop_taps(const ExternTensor &w, const std::vector<int64_t> &first,
                             const std::vector<int64_t> &count) {
  const size_t sp = first.size();
  int64_t outer = w.shape[0] * w.shape[1], kept = 1;
  for (size_t i = 0; i < sp; ++i) kept *= count[i];
  std::vector<float> out(static_cast<size_t>(outer * kept));
  const float *src = static_cast<const float *>(w.data);
  int64_t window = 1;
  for (size_t i = 0; i < sp; ++i) window *= w.shape[2 + i];
  std::vector<int64_t> idx(sp);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < kept; ++j) {
      int64_t rest = j, at = 0;
      for (size_t i = sp; i-- > 0;) {  // j's taps, last dim fastest, then their offset in W's window
        idx[i] = rest % count[i] + first[i];
        rest /= count[i];
      }
      for (size_t i = 0; i < sp; ++i) at = at * w.shape[2 + i] + idx[i];
      out[static_cast<size_t>(o * kept + j)] = src[o * window + at];
    }
  return out;
}

// W's dims [M, C/g, k...] as oneDNN's: [g, M/g, C/g, k...] in the same bytes for a grouped conv.
memory::dims ConvKernel::grouped(memory::dims wdims) const {
  if (group_ > 1) {
    wdims[0] /= group_;
    wdims.insert(wdims.begin(), group_);
  }
  return wdims;
}

// A convolution over non-overlapping windows (each spatial dim's window as
// long as its stride, ungrouped, no pads, dilation or cropped taps): a
// patchify, ConvNeXt's 2x2 stride-2 downsampling or a stem's 4x4 stride 4.
// oneDNN 2.6 runs it on both sides blocked with its older jit:avx512_core
// kernel, at 161-181 GFLOP/s alone on one thread for ConvNeXt's three
// (96 -> 192 at 56x56, 192 -> 384 at 28x28, 384 -> 768 at 14x14; 0.72-0.95 ms
// each in the model), and channels last with brgconv at 218-219 (0.53 ms):
// the copies of X and Y into and out of channels last cost less than that.
bool ConvKernel::patches(const ExternTensor &w, const Geometry &g) const {
  if (group_ != 1 || g.cropped || w.shape.size() < 3 || g.strides.size() != w.shape.size() - 2) return false;
  bool window = false;
  for (size_t d = 2; d < w.shape.size(); ++d) {
    const size_t s = d - 2;
    if (w.shape[d] != g.strides[s] || g.dilates[s] != 0 || g.pad_begin[s] != 0 || g.pad_end[s] != 0) return false;
    window |= w.shape[d] > 1;
  }
  return window;
}

ConvKernel::Entry ConvKernel::make_entry(const ExternTensor &x, const ExternTensor &w, const ExternTensor *bias,
                                         const Geometry &g, const Epilogue &e, int team) {
  Entry en;
  // Boxes first (make_boxes): they take X and Y blocked and need no primitive for the whole window.
  en.src = Staged::make_as(user_desc(0, x.shape), false, channels_last_desc(x.shape));
  en.dst = staged_dst(g.out, channels_last_desc(g.out));
  en.wei = memory(plain_desc(grouped(w.shape)), onednn_engine(), nullptr);
  if (bias) en.bias = memory(plain_desc(bias->shape), onednn_engine(), nullptr);  // run() binds both
  if (make_boxes(x, w, bias, g, e, en)) return en;
  memory::dims wdims = w.shape;
  std::vector<float> cropped;
  if (g.cropped) {
    cropped = crop_taps(w, g.tap_first, g.taps);
    std::copy(g.taps.begin(), g.taps.end(), wdims.begin() + 2);
  }
  const void *wdata = g.cropped ? cropped.data() : w.data;
  wdims = grouped(wdims);
  if (make_winograd(x, w, wdata, bias, g, e, wdims, team, en)) return en;
  // The layouts the primitive sees for X and Y, in the order tried. 2.6 has no
  // JIT kernel for one side blocked and the other nhwc (reference code for the
  // first convolution's 3 channels in and for a squeeze-excitation's 104 -> 26);
  // its jit:avx2 kernel reads few plain channels into blocked ones, so a plain
  // X comes next, then both unblocked as before the blocked layout.
  // A side the plan holds padded is seen as held: no copy. 2.6 has no JIT
  // kernel for it beside an nhwc side (one side is then copied: into padded
  // blocks, else out of them).
  const bool held_padded = padded(0) || padded_output_;
  std::vector<std::pair<memory::desc, memory::desc>> layouts;
  // Each pair once: several rules below can name the same one (both sides held padded, or
  // channels last that is already unblocked), and a pair that came back as reference code once
  // would again.
  auto add = [&layouts](const memory::desc &src, const memory::desc &dst) {
    if (std::find(layouts.begin(), layouts.end(), std::make_pair(src, dst)) == layouts.end())
      layouts.emplace_back(src, dst);
  };
  // On AVX-512 only (16-channel blocks), where 2.6 has brgconv; on AVX2 both layouts run its jit:avx2 kernel.
  if (patches(w, g) && channel_block() == 16 && !held_padded && blocked(x.shape) && blocked(g.out) &&
      !switched_off("DISCO_PATCH_NHWC"))
    add(unblocked_desc(x.shape), unblocked_desc(g.out));
  add(padded(0) ? padded_blocked_desc(x.shape) : channels_last_desc(x.shape),
      padded_output_ ? padded_blocked_desc(g.out) : channels_last_desc(g.out));
  if (held_padded) {
    add(padded_blocked_desc(x.shape), padded_blocked_desc(g.out));
    add(channels_last_desc(x.shape), channels_last_desc(g.out));
  }
  // One side blocked and the other not (an MBConv block's 24 or 40 channels
  // next to 144 or 240): both sides blocked, the unblocked one copied into
  // and out of a zero-padded block. On AVX-512 the 1x1 convs of
  // mobilenet_v2's 24-channel blocks took 0.30 and 0.35 ms as both sides
  // nhwc plus the copy of the wide side, against 0.14 ms for the conv blocked
  // (jit_1x1) and a copy of the narrow side; whole models ran in 0.91-0.94 of
  // their time (mobilenet_v2, efficientnet_b0) on one thread. Not on two:
  // there the copies ate the gain (0.95-1.07; regnet_y_400mf lost most;
  // benchmarks/results/padded-blocks-2026-12-04.md). Where the plan holds a
  // side padded, it is tried above. DISCO_PADDED_BLOCKS=0 turns it off (A/B runs).
  if (team == 1 && !held_padded && blocked(g.out) != blocked(x.shape) && !same_order(x.shape) && !same_order(g.out) &&
      x.shape[1] > 1 && !switched_off("DISCO_PADDED_BLOCKS"))
    add(padded_blocked_desc(x.shape), padded_blocked_desc(g.out));
  if (blocked(g.out) && !blocked(x.shape)) add(plain_desc(x.shape), channels_last_desc(g.out));
  if (blocked(g.out) || blocked(x.shape)) add(unblocked_desc(x.shape), unblocked_desc(g.out));
  for (const auto &[src_desc, dst_desc] : layouts) {
    en = make_entry_in(x, w, wdata, bias, g, e, wdims, src_desc, dst_desc);
    if (en.impl.find("ref") == std::string::npos) break;
  }
  auto slow = [](const Entry &n) {
    return n.impl.find("gemm") != std::string::npos || n.impl.find("ref") != std::string::npos;
  };
  const bool padded = std::any_of(g.pad_begin.begin(), g.pad_begin.end(), [](int64_t p) { return p > 0; }) ||
                      std::any_of(g.pad_end.begin(), g.pad_end.end(), [](int64_t p) { return p > 0; });
  if (padded && slow(en)) {
    Entry p = make_padded(x, w, wdata, bias, g, e, wdims);
    if (!slow(p)) en = std::move(p);
  }
  return en;
}

bool ConvKernel::make_winograd(const ExternTensor &x, const ExternTensor &w, const void *wdata,
                               const ExternTensor *bias, const Geometry &g, const Epilogue &e,
                               const memory::dims &wdims, int team, Entry &en) {
  if (g.out.size() != 4) return false;
  WinogradCase c;
  c.batch = x.shape[0];
  c.threads = team;
  c.groups = group_;
  c.in_channels = x.shape[1];
  c.out_channels = g.out[1];
  c.kernel_h = g.taps[0];
  c.kernel_w = g.taps[1];
  c.stride_h = g.strides[0];
  c.stride_w = g.strides[1];
  c.dilated = g.dilates[0] != 0 || g.dilates[1] != 0;
  c.out_h = g.out[2];
  c.out_w = g.out[3];
  c.unpadded = std::all_of(g.pad_begin.begin(), g.pad_begin.end(), [](int64_t p) { return p == 0; }) &&
               std::all_of(g.pad_end.begin(), g.pad_end.end(), [](int64_t p) { return p == 0; });
  const WinogradUse use = winograd_use(c);
  if (use == WinogradUse::kNo) return false;
  // Its kernels take X and Y blocked (nChw16c); where oneDNN has none for this
  // conv (another ISA, an unblocked channel count, a post-op it does not
  // fuse), creating the primitive fails and the direct path follows.
  try {
    Entry wino = make_entry_in(x, w, wdata, bias, g, e, wdims, channels_last_desc(x.shape), channels_last_desc(g.out),
                               dnnl::algorithm::convolution_winograd, use == WinogradUse::kPerImage);
    if (wino.impl.find("wino") == std::string::npos) return false;
    en = std::move(wino);
    return true;
  } catch (const std::exception &) {
    return false;
  }
}

// 2.6's depthwise JIT kernel takes pads of at most 4 (jit_dw:avx2, probed for
// windows of 9 to 31 taps); beyond, it runs the conv on its im2col gemm or
// its reference code. Conformer's depthwise conv1d (31 taps, pads of 15, on
// [2, 512, 77]): 0.10 ms unpadded on jit_dw against 2.6 ms on the gemm, for a
// copy of X. So where the primitive came back as gemm or reference code, the
// same conv on X copied into a zero-bordered, blocked buffer, without pads,
// is tried, and kept when it gets another JIT kernel.
ConvKernel::Entry ConvKernel::make_padded(const ExternTensor &x, const ExternTensor &w, const void *wdata,
                                          const ExternTensor *bias, const Geometry &g, const Epilogue &e,
                                          const memory::dims &wdims) {
  const auto &eng = onednn_engine();
  memory::dims dims = x.shape, at(x.shape.size(), 0);
  Geometry unpadded = g;
  for (size_t i = 0; i < g.pad_begin.size(); ++i) {
    dims[2 + i] += g.pad_begin[i] + g.pad_end[i];
    at[2 + i] = g.pad_begin[i];
    unpadded.pad_begin[i] = unpadded.pad_end[i] = 0;
  }
  const memory::desc full = channels_last_desc(dims);
  ExternTensor xp = x;
  xp.shape = dims;
  Entry en = make_entry_in(xp, w, wdata, bias, unpadded, e, wdims, full, channels_last_desc(g.out));
  en.padded.assign(full.get_size() / sizeof(float), 0.0f);
  memory whole = en.src.inner;  // the primitive's X, in en.args
  whole.set_data_handle(en.padded.data());
  Staged s;
  s.user = memory(user_desc(0, x.shape), eng, nullptr);
  s.inner = memory(full.submemory_desc(x.shape, at), eng, nullptr);
  s.copied = true;
  s.copy = guarded("create the reorder into the padded X", [&] { return dnnl::reorder(s.user, s.inner); });
  en.src = s;
  en.impl += " (X copied into zero borders)";
  return en;
}

// Boxes pay where most of the window reads padding (DeepLab's ASPP: 18% of
// it reads X at 14x14 with dilation 12) and cost a primitive and two copies
// each, so: dilated windows, at most 27 boxes, at most half the work. Binary
// post-ops would need their operands cut into boxes too; those convs keep
// the one primitive.
bool ConvKernel::make_boxes(const ExternTensor &x, const ExternTensor &w, const ExternTensor *bias,
                            const Geometry &g, const Epilogue &e, Entry &en, bool by_tap_ok) {
  const size_t sp = strides_.size();
  if (!w.constant || !e.operands.empty()) return false;
  if (std::all_of(dilations_.begin(), dilations_.end(), [](int64_t d) { return d == 1; })) return false;
  ConvWindow win;
  for (size_t i = 0; i < sp; ++i) {
    win.in.push_back(x.shape[2 + i]);
    win.out.push_back(g.out[2 + i]);
    win.kernel.push_back(w.shape[2 + i]);
    win.strides.push_back(strides_[i]);
    win.dilations.push_back(dilations_[i]);
    win.pad_begin.push_back(g.pad_begin[i] + g.tap_first[i] * dilations_[i]);  // undo the crop: taps count from 0
  }
  std::vector<ConvBox> boxes = padding_free_boxes(win);
  if (boxes.size() < 2 || boxes.size() > 27 || boxes_work_fraction(win, boxes) > 0.5) return false;
  // By tap instead where that streams less of W (these convolutions are
  // bound by reading W: DeepLab's ASPP box of 2 x 10 outputs with 2 taps ran
  // at 52 GFLOP/s) and a tap reads X at every output (its box runs last).
  std::vector<ConvBox> taps = tap_boxes(win);
  auto covers_all = [&](const ConvBox &b) {
    for (size_t i = 0; i < sp; ++i)
      if (b.out_begin[i] != 0 || b.out_end[i] != g.out[2 + i]) return false;
    return true;
  };
  const auto whole = std::find_if(taps.begin(), taps.end(), covers_all);
  const bool by_tap = by_tap_ok && whole != taps.end() && boxes_weight_taps(taps) < boxes_weight_taps(boxes) &&
                      !switched_off("DISCO_TAP_BOXES");
  auto cannot = [&] { return by_tap && make_boxes(x, w, bias, g, e, en, false); };
  if (by_tap) {
    std::rotate(whole, whole + 1, taps.end());  // the covering box last
    boxes = std::move(taps);
  }
  const auto &eng = onednn_engine();
  const Epilogue::Lowered post = e.lower({}, -1, -1);
  dnnl::primitive_attr attr, plain, sum_in;
  if (by_tap) {
    // The last box: its sum added to Y's, then the epilogue (eltwise ops only: no operands here).
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    for (int i = 0; i < post.ops.len(); ++i) {
      float scale = 1, alpha = 0, beta = 0;
      dnnl::algorithm alg;
      post.ops.get_params_eltwise(i, scale, alg, alpha, beta);
      ops.append_eltwise(scale, alg, alpha, beta);
    }
    attr.set_post_ops(ops);
    dnnl::post_ops add;
    add.append_sum(1.0f);
    sum_in.set_post_ops(add);
  } else {
    attr.set_post_ops(post.ops);
  }
  user_scratchpad(attr);
  user_scratchpad(plain);
  std::vector<Entry::Box> made;
  std::string impls;
  for (const ConvBox &b : boxes) {
    const bool last = &b == &boxes.back();
    const bool partial = by_tap && !last;  // no bias or epilogue; its sum added into Y
    const ExternTensor *box_bias = partial ? nullptr : bias;
    memory::dims src = {x.shape[0], x.shape[1]}, dst = {g.out[0], g.out[1]}, src_at = {0, 0}, dst_at = {0, 0};
    memory::dims wdims = {w.shape[0], w.shape[1]}, dilates;
    std::vector<int64_t> first, count;
    for (size_t i = 0; i < sp; ++i) {
      const int64_t taps = b.tap_end[i] - b.tap_begin[i], outs = b.out_end[i] - b.out_begin[i];
      src.push_back((outs - 1) * strides_[i] + (taps - 1) * dilations_[i] + 1);
      dst.push_back(outs);
      src_at.push_back(b.in_begin[i]);
      dst_at.push_back(b.out_begin[i]);
      wdims.push_back(taps);
      dilates.push_back(taps == 1 ? 0 : dilations_[i] - 1);
      first.push_back(b.tap_begin[i]);
      count.push_back(taps);
    }
    const std::vector<float> cropped = crop_taps(w, first, count);
    wdims = grouped(wdims);
    const memory::dims zeros(sp, 0);
    Entry::Box box;
    bool jit = false;
    // Blocked first; 2.6 runs dilated windows on blocked tensors as reference code, so channels last next.
    for (bool blocked_layout : {true, false}) {
      const memory::desc sd = blocked_layout ? channels_last_desc(src) : unblocked_desc(src);
      const memory::desc dd = blocked_layout ? channels_last_desc(dst) : unblocked_desc(dst);
      const memory::desc wd(wdims, memory::data_type::f32, memory::format_tag::any);
      auto pd = guarded("create a convolution primitive for a box", [&] {
        using dnnl::convolution_forward;
        const auto prop = dnnl::prop_kind::forward_inference;
        const auto alg = dnnl::algorithm::convolution_direct;
        auto d = box_bias ? convolution_forward::desc(prop, alg, sd, wd, plain_desc(box_bias->shape), dd, g.strides,
                                                      dilates, zeros, zeros)
                          : convolution_forward::desc(prop, alg, sd, wd, dd, g.strides, dilates, zeros, zeros);
        return convolution_forward::primitive_desc(d, partial ? plain : attr, eng);
      });
      const std::string impl = pd.impl_info_str();
      if (impl.find("ref") != std::string::npos) continue;
      made_primitive(pd);
      box.prim = dnnl::convolution_forward(pd);
      add_scratchpad(pd, box.args);
      box.packed = pack_copy(plain_desc(wdims), cropped.data(), pd.weights_desc());
      box.src = memory(pd.src_desc(), eng, nullptr);
      box.dst = memory(pd.dst_desc(), eng, nullptr);
      impls += (impls.empty() ? "" : ", ") + impl;
      jit = true;
      break;
    }
    if (!jit) return cannot();
    box.src_view = memory(en.src.inner.get_desc().submemory_desc(src, src_at), eng, nullptr);
    box.dst_view = memory(en.dst.inner.get_desc().submemory_desc(dst, dst_at), eng, nullptr);
    if (by_tap && last) {
      // Covers Y: writes the staged Y itself; reads the staged X where its window is all of X.
      if (box.dst.get_desc() != en.dst.inner.get_desc()) return cannot();
      box.staged_dst = true;
      box.dst = en.dst.inner;
      box.staged_src = src == x.shape && box.src.get_desc() == en.src.inner.get_desc();
      if (box.staged_src) box.src = en.src.inner;
    }
    if (!box.staged_src) box.in = dnnl::reorder(box.src_view, box.src);
    if (!box.staged_dst) {
      box.out = partial ? dnnl::reorder(dnnl::reorder::primitive_desc(box.dst, box.dst_view, sum_in))
                        : dnnl::reorder(box.dst, box.dst_view);
    }
    box.args[DNNL_ARG_SRC] = box.src;
    box.args[DNNL_ARG_WEIGHTS] = *box.packed;
    box.args[DNNL_ARG_DST] = box.dst;
    if (box_bias) {
      box.bias = memory(plain_desc(bias->shape), eng, nullptr);
      box.args[DNNL_ARG_BIAS] = box.bias;
    }
    made.push_back(std::move(box));
  }
  en.boxes = std::move(made);
  en.zero_dst = by_tap;
  en.impl = "convolution in " + std::to_string(boxes.size()) + (by_tap ? " boxes by tap: " : " boxes: ") + impls;
  return true;
}

ConvKernel::Entry ConvKernel::make_entry_in(const ExternTensor &x, const ExternTensor &w, const void *wdata,
                                            const ExternTensor *bias, const Geometry &g, const Epilogue &e,
                                            const memory::dims &wdims, const memory::desc &src_desc,
                                            const memory::desc &dst_desc, dnnl::algorithm alg, bool per_image) {
  const auto &eng = onednn_engine();
  Entry en;
  en.src = Staged::make_as(user_desc(0, x.shape), false, src_desc);
  en.dst = staged_dst(g.out, dst_desc);
  // The memories the primitive is given: the whole tensors, or per image
  // (per_image), for a tensor with a dim of images, a view of its first image
  // with the same strides, moved to image i for run i (execute_images): 1 /
  // images of its bytes, the images outermost as in every layout disco holds.
  const int64_t images = per_image ? x.shape[0] : 1;
  auto arg = [&](const memory &whole) -> memory {
    const memory::desc d = whole.get_desc();
    if (images == 1 || d.dims().empty() || d.dims()[0] != images) return whole;
    memory::dims one = d.dims();
    one[0] = 1;
    const memory::desc v = d.submemory_desc(one, memory::dims(one.size(), 0));
    check(v.get_size() * static_cast<size_t>(images) == d.get_size(), "per-image convolution: the ", images,
          " images of ", shape_text(d.dims()), " are not laid out one after another");
    en.image_args.push_back({whole, memory(v, eng, nullptr), v.get_size()});
    return en.image_args.back().one;
  };
  en.images = images;
  const memory src_arg = arg(en.src.inner), dst_arg = arg(en.dst.inner);
  std::vector<memory> operand_args;
  std::vector<memory::desc> operand_descs;
  for (size_t i = 0; i < e.operands.size(); ++i) {
    const memory::dims &dims = e.operands[i].dims;
    const memory::desc user = e.inputs[i] >= 0 ? user_desc(static_cast<size_t>(e.inputs[i]), dims) : plain_desc(dims);
    en.operands.push_back(Staged::make_as(user, false, dims == g.out ? dst_desc : channels_last_desc(dims)));
    operand_args.push_back(arg(en.operands.back().inner));
    operand_descs.push_back(operand_args.back().get_desc());
  }
  // The first Add of an operand as large as the result: dst starts as that operand.
  for (size_t k = 0, i = 0; k < e.ops.size() && en.sum < 0; ++k) {
    if (e.ops[k].num_operands() == 0) continue;
    if (e.ops[k].kind == OnednnPostOp::Add && e.operands[i].dims == g.out) en.sum = static_cast<int>(i);
    ++i;
  }
  if (en.sum >= 0) {
    en.sum_user = en.operands[static_cast<size_t>(en.sum)];
    if (en.sum_user.user.get_desc() != en.dst.inner.get_desc())
      en.sum_copy = dnnl::reorder(en.sum_user.user, en.dst.inner);
  }
  const memory::desc user_wei = plain_desc(wdims);
  const Epilogue::Lowered post = e.lower(operand_descs, -1, en.sum);
  dnnl::primitive_attr attr;
  attr.set_post_ops(post.ops);
  user_scratchpad(attr);
  auto pd = guarded("create a convolution primitive", [&] {
    using dnnl::convolution_forward;
    const auto prop = dnnl::prop_kind::forward_inference;
    const memory::desc src = src_arg.get_desc(), dst = dst_arg.get_desc();
    const memory::desc wei(wdims, memory::data_type::f32, memory::format_tag::any);
    auto d = bias ? convolution_forward::desc(prop, alg, src, wei, plain_desc(bias->shape), dst, g.strides, g.dilates,
                                              g.pad_begin, g.pad_end)
                  : convolution_forward::desc(prop, alg, src, wei, dst, g.strides, g.dilates, g.pad_begin, g.pad_end);
    return convolution_forward::primitive_desc(d, attr, eng);
  });
  made_primitive(pd);
  en.prim = dnnl::convolution_forward(pd);
  en.impl = std::string("convolution ") + pd.impl_info_str();
  if (en.images > 1) en.impl += " once per image";
  en.wei = memory(user_wei, eng, nullptr);
  memory wei_arg = en.wei;
  if (pd.weights_desc() != user_wei || wdata != w.data) {  // a cropped W is a copy in any layout
    if (w.constant) {
      en.packed = wdata == w.data ? packed_weights(user_wei, wdata, pd.weights_desc())
                                  : pack_copy(user_wei, wdata, pd.weights_desc());
      wei_arg = *en.packed;
    } else {
      en.wei_inner = memory(pd.weights_desc(), eng, nullptr);
      en.wei_copy = dnnl::reorder(en.wei, en.wei_inner);
      wei_arg = en.wei_inner;
    }
  }
  en.args = {{DNNL_ARG_SRC, src_arg}, {DNNL_ARG_WEIGHTS, wei_arg}, {DNNL_ARG_DST, dst_arg}};
  add_scratchpad(pd, en.args);
  if (bias) {
    en.bias = memory(plain_desc(bias->shape), eng, nullptr);
    en.args[DNNL_ARG_BIAS] = en.bias;
  }
  for (size_t i = 0; i < en.operands.size(); ++i)
    if (post.args[i]) {
      en.binary.push_back(i);
      en.args[post.args[i]] = operand_args[i];
    }
  // Only the views the primitive reads are moved per image (the others' tensors are not bound).
  auto unread = [&](const Entry::ImageArg &a) {
    return std::none_of(en.args.begin(), en.args.end(),
                        [&](const auto &kv) { return kv.second.get() == a.one.get(); });
  };
  en.image_args.erase(std::remove_if(en.image_args.begin(), en.image_args.end(), unread), en.image_args.end());
  return en;
}

void ConvKernel::execute_images(Entry &en) {
  if (en.images == 1) {
    execute(en.prim, en.args);
    return;
  }
  for (int64_t i = 0; i < en.images; ++i) {
    for (Entry::ImageArg &a : en.image_args)
      a.one.set_data_handle(static_cast<char *>(a.whole.get_data_handle()) + static_cast<size_t>(i) * a.bytes);
    execute(en.prim, en.args);
  }
}

// A 1-D conv runs as a 2-D one over [N, C, 1, L]: the same bytes in each
// layout the plan holds a tensor in (plain, channels last, blocked by 8
// channels), and 2.6 has JIT kernels for 2-D depthwise windows, where it runs
// 1-D ones on its im2col gemm (conformer's depthwise conv1d of 31 taps took
// more time than its two pointwise convs together). X, W, Y and the epilogue
// operands (aligned to rank 3 first, as broadcasting aligns them) get a dim
// of 1 before the last; the bias keeps its [M].
void ConvKernel::run(const ExternCall &call) {
  if (!lifted_) {
    run_spatial(call);
    return;
  }
  for (size_t i = 0; i < 2; ++i)
    check(call.inputs.size() > i && call.inputs[i].shape.size() == 3, i == 0 ? "X " : "W ",
          shape_text(call.inputs.size() > i ? call.inputs[i].shape : std::vector<int64_t>{}), " must have rank 3");
  auto lift = [](ExternTensor t) {
    if (t.dtype == DType::Undefined) return t;
    t.shape.insert(t.shape.begin(), 3 - std::min<size_t>(3, t.shape.size()), 1);
    t.shape.insert(t.shape.end() - 1, 1);
    return t;
  };
  std::vector<ExternTensor> ins, outs;
  for (size_t i = 0; i < call.inputs.size(); ++i) ins.push_back(i == 2 ? call.inputs[i] : lift(call.inputs[i]));
  for (const ExternTensor &t : call.outputs) outs.push_back(lift(t));
  run_spatial(ExternCall{ins, outs, call.symbols});
}

void ConvKernel::run_spatial(const ExternCall &call) {
  const ExternTensor &x = input(call, 0, "X"), &w = input(call, 1, "W");
  const ExternTensor *bias =
      call.inputs.size() > 2 && call.inputs[2].dtype != DType::Undefined ? &input(call, 2, "bias") : nullptr;
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
  const std::vector<int64_t> want = out_channels_last_ ? permuted(g.out, kToChannelsLast) : g.out;
  check(y.shape == want, "output is ", shape_text(y.shape), ", expected ", shape_text(want));
  if (y.num_elements() == 0) return;
  Epilogue e = epilogue(call, 3, g.out);
  float *dst = static_cast<float *>(y.data);
  if (c == 0) {  // no input channels: the bias, then the epilogue
    // Aside from Y: an epilogue operand may be Y's own bytes (a residual the
    // memory plan lets the result take, memory_plan.h), read after the bias is written.
    const int64_t inner = y.num_elements() / (g.out[0] * m);
    std::vector<float> out(static_cast<size_t>(y.num_elements()));
    for (int64_t i = 0; i < y.num_elements(); ++i)
      out[i] = bias ? static_cast<const float *>(bias->data)[(i / inner) % m] : 0.0f;
    apply_post_ops_scalar(out.data(), g.out, e.ops, e.operands);
    if (out_channels_last_)
      copy_to_layout(out.data(), dst, scattered_layout(g.out, kToChannelsLast));
    else
      std::memcpy(dst, out.data(), out.size() * sizeof(float));
    return;
  }
  const EltwiseTail tail = take_eltwise_tail(e);  // computed below, over the primitive's result
  // Multiply-adds per output element: the input channels of a group times the window.
  double per_output = static_cast<double>(w.shape[1]);
  for (size_t d = 2; d < w.shape.size(); ++d) per_output *= static_cast<double>(w.shape[d]);
  const int team = team_for(2.0 * static_cast<double>(y.num_elements()) * per_output);
  use_team(team);  // the primitive is made for the team that runs it
  const std::vector<int64_t> key = shape_key(call);
  Entry *en = cache_.find(key);
  if (!en) {
    en = &cache_.insert(key, make_entry(x, w, bias, g, e, team));
    if (!tail.empty()) en->impl += " + disco's eltwise tail";
  }
  if (scratch_.size() < 3 + en->operands.size()) scratch_.resize(3 + en->operands.size());
  en->src.bind(x.data, scratch_[0]);
  if (!en->padded.empty()) en->src.inner.set_data_handle(en->padded.data());
  en->dst.bind(dst, scratch_[1]);
  en->wei.set_data_handle(w.data);
  if (en->wei_copy) en->wei_inner.set_data_handle(scratch_[2].get(en->wei_inner.get_desc().get_size() / sizeof(float)));
  if (bias) en->bias.set_data_handle(bias->data);
  const size_t out_bytes = en->dst.user.get_desc().get_size();  // a padded Y's padding too
  if (alias_copies_.size() < en->operands.size()) alias_copies_.resize(en->operands.size());
  for (size_t i : en->binary)
    en->operands[i].bind(apart_from_result(e.operands[i].data, en->operands[i].user.get_desc().get_size(), dst,
                                           out_bytes, alias_copies_[i]),
                         scratch_[3 + i]);
  // Inputs into the primitive's layouts, the convolution, the result back out.
  auto copy = [&](dnnl::reorder &r, memory &from, memory &to) {
    use_team(team_for_copy(static_cast<int64_t>(to.get_desc().get_size() / sizeof(float))));
    execute(r, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  };
  if (en->src.copied) copy(en->src.copy, en->src.user, en->src.inner);
  for (size_t i : en->binary)
    if (en->operands[i].copied) copy(en->operands[i].copy, en->operands[i].user, en->operands[i].inner);
  if (en->wei_copy) copy(en->wei_copy, en->wei, en->wei_inner);
  if (en->sum >= 0) {  // dst starts as the residual
    const void *res = e.operands[static_cast<size_t>(en->sum)].data;
    en->sum_user.user.set_data_handle(const_cast<void *>(res));
    if (en->sum_copy)
      copy(en->sum_copy, en->sum_user.user, en->dst.inner);
    else if (res != en->dst.inner.get_data_handle())
      copy_floats(static_cast<float *>(en->dst.inner.get_data_handle()), static_cast<const float *>(res),
                  static_cast<int64_t>(en->dst.inner.get_desc().get_size() / sizeof(float)));
  }
  use_team(team);
  if (en->boxes.empty()) execute_images(*en);
  if (en->zero_dst) std::memset(en->dst.inner.get_data_handle(), 0, en->dst.inner.get_desc().get_size());
  for (Entry::Box &b : en->boxes) {
    b.src_view.set_data_handle(en->src.inner.get_data_handle());
    b.dst_view.set_data_handle(en->dst.inner.get_data_handle());
    if (!b.staged_src) b.src.set_data_handle(box_scratch_[0].get(b.src.get_desc().get_size() / sizeof(float)));
    if (!b.staged_dst) b.dst.set_data_handle(box_scratch_[1].get(b.dst.get_desc().get_size() / sizeof(float)));
    if (b.bias) b.bias.set_data_handle(bias->data);
    if (!b.staged_src) copy(b.in, b.src_view, b.src);
    use_team(team);
    execute(b.prim, b.args);
    if (!b.staged_dst) copy(b.out, b.dst, b.dst_view);
  }
  run_eltwise_tail(tail, static_cast<float *>(en->dst.inner.get_data_handle()),
                   static_cast<int64_t>(en->dst.inner.get_desc().get_size() / sizeof(float)), team);
  if (en->dst.copied) copy(en->dst.copy, en->dst.inner, en->dst.user);
  ran(en->impl);
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_conv_kernel(const PlanStep &step) {
  return std::make_unique<ConvKernel>(step);
}

}  // namespace disco
