#include "targets/onednn/conv_regions.h"

#include <algorithm>

namespace disco {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

struct Segment {
  int64_t out_begin, out_end, tap_begin, tap_end;
};

// Output positions of one dim grouped by the range of taps that read X.
std::vector<Segment> segments(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pad) {
  std::vector<Segment> segs;
  for (int64_t o = 0; o < out; ++o) {
    // Tap t reads X at o * s - pad + t * d: in [0, in) for t in [lo, hi].
    const int64_t lo = std::max<int64_t>(0, -floor_div(o * s - pad, d));
    const int64_t hi = std::min<int64_t>(k - 1, floor_div(in - 1 - o * s + pad, d));
    if (lo > hi) return {};
    if (!segs.empty() && segs.back().tap_begin == lo && segs.back().tap_end == hi + 1)
      segs.back().out_end = o + 1;
    else
      segs.push_back({o, o + 1, lo, hi + 1});
  }
  return segs;
}

// Every box that takes one segment of each dim (the last dim fastest).
std::vector<ConvBox> boxes_of(const ConvWindow &w, const std::vector<std::vector<Segment>> &dims) {
  const size_t sp = dims.size();
  std::vector<ConvBox> boxes;
  std::vector<size_t> at(sp, 0);
  for (;;) {
    ConvBox b;
    for (size_t i = 0; i < sp; ++i) {
      const Segment &s = dims[i][at[i]];
      b.out_begin.push_back(s.out_begin);
      b.out_end.push_back(s.out_end);
      b.tap_begin.push_back(s.tap_begin);
      b.tap_end.push_back(s.tap_end);
      b.in_begin.push_back(s.out_begin * w.strides[i] - w.pad_begin[i] + s.tap_begin * w.dilations[i]);
    }
    boxes.push_back(std::move(b));
    size_t i = sp;
    while (i > 0 && ++at[i - 1] == dims[i - 1].size()) at[--i] = 0;
    if (i == 0) break;
  }
  return boxes;
}

}  // namespace

std::vector<ConvBox> padding_free_boxes(const ConvWindow &w) {
  const size_t sp = w.in.size();
  std::vector<std::vector<Segment>> dims;
  for (size_t i = 0; i < sp; ++i) {
    dims.push_back(segments(w.in[i], w.out[i], w.kernel[i], w.strides[i], w.dilations[i], w.pad_begin[i]));
    if (dims.back().empty()) return {};
  }
  return boxes_of(w, dims);
}

std::vector<ConvBox> tap_boxes(const ConvWindow &w) {
  const size_t sp = w.in.size();
  // Per dim, per tap t: the outputs o with 0 <= o * s - pad + t * d < in.
  std::vector<std::vector<Segment>> dims(sp);
  for (size_t i = 0; i < sp; ++i)
    for (int64_t t = 0; t < w.kernel[i]; ++t) {
      const int64_t at = t * w.dilations[i] - w.pad_begin[i];  // X's position at o = 0
      const int64_t lo = std::max<int64_t>(0, -floor_div(at, w.strides[i]));
      const int64_t hi = std::min<int64_t>(w.out[i] - 1, floor_div(w.in[i] - 1 - at, w.strides[i]));
      if (lo <= hi) dims[i].push_back({lo, hi + 1, t, t + 1});
    }
  for (const auto &d : dims)
    if (d.empty()) return {};
  return boxes_of(w, dims);
}

int64_t boxes_weight_taps(const std::vector<ConvBox> &boxes) {
  int64_t taps = 0;
  for (const ConvBox &b : boxes) {
    int64_t n = 1;
    for (size_t i = 0; i < b.tap_begin.size(); ++i) n *= b.tap_end[i] - b.tap_begin[i];
    taps += n;
  }
  return taps;
}

double boxes_work_fraction(const ConvWindow &w, const std::vector<ConvBox> &boxes) {
  double full = 1, work = 0;
  for (size_t i = 0; i < w.in.size(); ++i) full *= static_cast<double>(w.out[i] * w.kernel[i]);
  for (const ConvBox &b : boxes) {
    double box = 1;
    for (size_t i = 0; i < w.in.size(); ++i)
      box *= static_cast<double>((b.out_end[i] - b.out_begin[i]) * (b.tap_end[i] - b.tap_begin[i]));
    work += box;
  }
  return full > 0 ? work / full : 1.0;
}

}  // namespace disco
