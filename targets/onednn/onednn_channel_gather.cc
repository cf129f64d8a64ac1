// "onednn.channel_gather": results each of whose channels is one channel of
// one input, with the same batch and spatial dims: ShuffleNet's channel
// shuffle with the Concat before it and the Slices after it
// (match_channel_shuffle, onednn_spatial_rules.cc). The plan names, per
// result, each channel's input and channel ("channel_map").
//
// Every tensor is read and written in the layout the plan holds it in
// (onednn_layout.h): plain, channels last, or blocked by 8 or 16 channels. In all
// three, element (n, c, p) (p the flattened spatial position) sits at
// n * image + channel_offset[c] + p * pixel_stride, so one copy loop serves
// every mix. Where every tensor is plain, each channel is a contiguous run of
// pixels and the copy is a memcpy per channel; otherwise the loop walks the
// pixels outermost and, within a pixel, copies the result channels in order,
// so that channels-last writes are sequential and every read stays within
// the few cache lines one pixel of each input spans. Within a pixel, 8 result
// channels adjacent in memory are copied as two vectors where they are 4 and
// 4 adjacent channels of two inputs taken in turn (a shuffle of two groups,
// ShuffleNet v2's: an unpack); the rest one float at a time. One
// float at a time, the shuffle ran at 2 to 8 ns a channel (ShuffleNet's
// 58- and 116-channel halves).
#include <omp.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "targets/onednn/onednn_cache.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/onednn_step.h"

namespace disco {

namespace {

// Where a tensor's elements are: (n, c, p) at n * image + channel[c] + p * pixel.
struct Layout {
  int64_t image = 0, pixel = 1;
  std::vector<int64_t> channel;
  bool plain = true;
};

Layout layout_of(const std::vector<int64_t> &dims, bool channels_last) {
  int64_t spatial = 1;
  for (size_t d = 2; d < dims.size(); ++d) spatial *= dims[d];
  const int64_t channels = dims[1], block = channel_block();
  Layout l;
  l.image = channels * spatial;
  l.channel.resize(static_cast<size_t>(channels));
  // One channel or one position: every layout orders the elements alike (same_order).
  l.plain = !channels_last || same_order(dims);
  for (int64_t c = 0; c < channels; ++c) {
    if (l.plain) l.channel[c] = c * spatial;
    else if (blocked(dims)) l.channel[c] = (c / block) * spatial * block + c % block;
    else l.channel[c] = c;
  }
  l.pixel = l.plain ? 1 : blocked(dims) ? block : channels;
  return l;
}

class ChannelGatherKernel : public OnednnStep {
 public:
  explicit ChannelGatherKernel(const PlanStep &step);
  size_t cached_shapes() const override { return cache_.size(); }
  void run(const ExternCall &call) override;

 private:
  struct Source {
    size_t input;
    int64_t channel;
  };
  // One result channel's copy: offsets within one pixel of an image.
  struct Move {
    uint32_t out, in;
    int64_t to, from;
  };
  // 8 result channels adjacent in memory from 4 and 4 adjacent channels of
  // in0 and in1 in turn: in0's first, in1's first, in0's second, ...
  struct Zip8 {
    uint32_t out, in0, in1;
    int64_t to, from0, from1;
  };
  struct Entry {
    std::vector<Layout> in, out;
    std::vector<Zip8> zips;
    std::vector<Move> moves;  // the channels no vector copies
    bool plain = false;  // every tensor plain: each move is a memcpy of `pixels` floats per image
    int64_t images = 0, pixels = 0;
  };
  Entry make_entry(const ExternCall &call) const;
  void copy_pixels(const Entry &en, const ExternCall &call, int64_t first, int64_t last) const;
  void clear_cache() override { cache_.clear(); }

  std::vector<std::vector<Source>> map_;  // per result, per channel
  std::vector<bool> in_kept_, out_kept_;  // held channels last (onednn_layout.h)
  ShapeLruCache<Entry> cache_;
};

ChannelGatherKernel::ChannelGatherKernel(const PlanStep &step) : OnednnStep(step), cache_(kOnednnCacheCapacity) {
  const std::vector<int64_t> map = param_ints(step, "channel_map");
  size_t at = 0, inputs = 0;
  while (at < map.size()) {
    const int64_t channels = map[at++];
    check(channels >= 0 && at + 2 * static_cast<size_t>(channels) <= map.size(), "channel_map is cut short");
    std::vector<Source> result;
    for (int64_t c = 0; c < channels; ++c, at += 2) {
      check(map[at] >= 0 && map[at + 1] >= 0, "channel_map has a negative input or channel");
      result.push_back({static_cast<size_t>(map[at]), map[at + 1]});
      inputs = std::max(inputs, result.back().input + 1);
    }
    map_.push_back(std::move(result));
  }
  check(map_.size() == step.outputs.size(), "channel_map describes ", map_.size(), " results, the step has ",
        step.outputs.size());
  check(inputs <= step.inputs.size(), "channel_map reads input ", inputs - 1, " of ", step.inputs.size());
  in_kept_.assign(step.inputs.size(), false);
  out_kept_.assign(step.outputs.size(), false);
  auto mark = [&](const char *key, std::vector<bool> &kept) {
    for (size_t i : param_positions(step, key)) {
      check(i < kept.size(), key, " names position ", i, " of ", kept.size());
      kept[i] = true;
    }
  };
  mark("channels_last_inputs", in_kept_);
  mark("channels_last_outputs", out_kept_);
}

ChannelGatherKernel::Entry ChannelGatherKernel::make_entry(const ExternCall &call) const {
  Entry en;
  const std::vector<int64_t> &ref = call.outputs[0].shape;
  en.images = ref[0];
  en.pixels = 1;
  for (size_t d = 2; d < ref.size(); ++d) en.pixels *= ref[d];
  en.plain = true;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    en.in.push_back(layout_of(call.inputs[i].shape, in_kept_[i]));
    en.plain = en.plain && en.in.back().plain;
  }
  for (size_t o = 0; o < call.outputs.size(); ++o) {
    en.out.push_back(layout_of(call.outputs[o].shape, out_kept_[o]));
    en.plain = en.plain && en.out.back().plain;
  }
  // True when channels [first, first + n) of a tensor are adjacent floats in one pixel.
  auto adjacent = [](const Layout &l, int64_t first, int64_t n) {
    if (l.plain || first + n > static_cast<int64_t>(l.channel.size())) return false;
    return l.channel[static_cast<size_t>(first + n - 1)] - l.channel[static_cast<size_t>(first)] == n - 1;
  };
  for (size_t o = 0; o < map_.size(); ++o) {
    const std::vector<Source> &m = map_[o];
    const Layout &out = en.out[o];
    size_t c = 0;
    while (c < m.size()) {
#if defined(__SSE2__)
      if (c + 8 <= m.size() && adjacent(out, static_cast<int64_t>(c), 8)) {
        // m[first + step * t], t < n: one input, channels up by 1
        auto runs = [&](size_t first, size_t step, size_t n) {
          for (size_t t = 1; t < n; ++t) {
            const Source &a = m[first + step * (t - 1)], &b = m[first + step * t];
            if (b.input != a.input || b.channel != a.channel + 1) return false;
          }
          return adjacent(en.in[m[first].input], m[first].channel, static_cast<int64_t>(n));
        };
        const uint32_t oo = static_cast<uint32_t>(o);
        const int64_t to = out.channel[c];
        auto from = [&](size_t k) { return en.in[m[k].input].channel[static_cast<size_t>(m[k].channel)]; };
        if (runs(c, 2, 4) && runs(c + 1, 2, 4)) {
          en.zips.push_back({oo, static_cast<uint32_t>(m[c].input), static_cast<uint32_t>(m[c + 1].input),
                                to, from(c), from(c + 1)});
          c += 8;
          continue;
        }
      }
#endif
      const Source &s = m[c];
      en.moves.push_back({static_cast<uint32_t>(o), static_cast<uint32_t>(s.input), out.channel[c],
                          en.in[s.input].channel[static_cast<size_t>(s.channel)]});
      ++c;
    }
  }
  return en;
}

// Pixels [first, last) of all images (image-major), every result channel.
void ChannelGatherKernel::copy_pixels(const Entry &en, const ExternCall &call, int64_t first, int64_t last) const {
  std::vector<const float *> in(call.inputs.size());
  std::vector<float *> out(call.outputs.size());
  for (int64_t q = first; q < last; ++q) {
    const int64_t n = q / en.pixels, p = q % en.pixels;
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<const float *>(call.inputs[i].data) + n * en.in[i].image + p * en.in[i].pixel;
    for (size_t o = 0; o < out.size(); ++o)
      out[o] = static_cast<float *>(call.outputs[o].data) + n * en.out[o].image + p * en.out[o].pixel;
#if defined(__SSE2__)
    for (const Zip8 &z : en.zips) {
      const __m128 a = _mm_loadu_ps(in[z.in0] + z.from0), b = _mm_loadu_ps(in[z.in1] + z.from1);
      _mm_storeu_ps(out[z.out] + z.to, _mm_unpacklo_ps(a, b));
      _mm_storeu_ps(out[z.out] + z.to + 4, _mm_unpackhi_ps(a, b));
    }
#endif
    for (const Move &m : en.moves) out[m.out][m.to] = in[m.in][m.from];
  }
}

void ChannelGatherKernel::run(const ExternCall &call) {
  check(call.outputs.size() == map_.size(), "expects ", map_.size(), " results, got ", call.outputs.size());
  check(!call.inputs.empty() && call.inputs.size() == in_kept_.size(), "expects ", in_kept_.size(), " inputs, got ",
        call.inputs.size());
  const std::vector<int64_t> &ref = call.outputs[0].shape;
  check(ref.size() >= 3, "expects results of rank 3 or more, got ", shape_text(ref));
  // Every tensor: the same rank, batch and spatial dims; the channels the map names.
  auto same_but_channels = [&](const std::vector<int64_t> &dims) {
    if (dims.size() != ref.size()) return false;
    for (size_t d = 0; d < dims.size(); ++d)
      if (d != 1 && dims[d] != ref[d]) return false;
    return true;
  };
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const ExternTensor &x = input(call, i, "an input");
    check(same_but_channels(x.shape), "input ", i, " ", shape_text(x.shape), " does not match result 0 ",
          shape_text(ref), " outside the channels");
  }
  for (size_t o = 0; o < call.outputs.size(); ++o) {
    const ExternTensor &y = call.outputs[o];
    check(y.dtype == DType::F32, "result ", o, " is not float32");
    check(same_but_channels(y.shape) && y.shape[1] == static_cast<int64_t>(map_[o].size()), "result ", o, " ",
          shape_text(y.shape), " does not have the ", map_[o].size(), " channels and the dims of result 0 ",
          shape_text(ref));
    for (const Source &s : map_[o])
      check(s.channel < call.inputs[s.input].shape[1], "result ", o, " copies channel ", s.channel, " of input ",
            s.input, " ", shape_text(call.inputs[s.input].shape));
  }
  const std::vector<int64_t> key = shape_key(call);
  Entry *en = cache_.find(key);
  if (!en) en = &cache_.insert(key, make_entry(call));
  if (en->images == 0 || en->pixels == 0) return;
  if (en->plain) {
    const size_t bytes = static_cast<size_t>(en->pixels) * sizeof(float);
    for (int64_t n = 0; n < en->images; ++n)
      for (const Move &m : en->moves)
        std::memcpy(static_cast<float *>(call.outputs[m.out].data) + n * en->out[m.out].image + m.to,
                    static_cast<const float *>(call.inputs[m.in].data) + n * en->in[m.in].image + m.from, bytes);
    ran("memcpy per channel");
    return;
  }
  const int64_t total = en->images * en->pixels;
  const int64_t elements = total * static_cast<int64_t>(en->moves.size() + 8 * en->zips.size());
  const int team = static_cast<int>(std::min<int64_t>(team_for_copy(elements), total));
  if (team <= 1) {
    copy_pixels(*en, call, 0, total);
  } else {
#pragma omp parallel num_threads(team)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      copy_pixels(*en, call, total * t / nt, total * (t + 1) / nt);
    }
  }
  ran("copy per pixel");
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_channel_gather_kernel(const PlanStep &step) {
  return std::make_unique<ChannelGatherKernel>(step);
}

}  // namespace disco
