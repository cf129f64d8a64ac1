// Output boxes of a convolution in which no tap of the window reads padding.
//
// Along each spatial dim, the taps of the window that read X (not padding)
// form one range per output position, and that range changes only near the
// ends: a 3x3 window dilated by 12 on a 14x14 map reads X with all three row
// taps nowhere, with the middle one alone at rows 2-11, with two at rows 0-1
// and 12-13. Cutting the output where the ranges change gives boxes (the
// product of each dim's segments) that are each a convolution without
// padding, over a window of X, with W cropped to their taps: together they
// compute every output once, and multiply no padding. oneDNN 2.6 runs dilated
// convolutions on its im2col gemm, which does (DeepLab's ASPP at 224x224:
// 14.6 ms for a conv whose taps read X 18% of the time). No oneDNN here.
#pragma once
#include <cstdint>
#include <vector>

namespace disco {

struct ConvBox {
  // Per spatial dim: outputs [out_begin, out_end), taps [tap_begin, tap_end),
  // and the first position of X the box reads (its X window starts there).
  std::vector<int64_t> out_begin, out_end, tap_begin, tap_end, in_begin;
};

struct ConvWindow {
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin;  // per spatial dim
};

// The boxes, each dim's segments in order (the last dim fastest). Empty when
// some output reads padding only (no tap of its window touches X).
std::vector<ConvBox> padding_free_boxes(const ConvWindow &w);

// Per tap of the window (one tap in each dim), the box of outputs at which
// that tap reads X, if any: the window as a sum of 1x1 convolutions, each
// over its own box. Where most taps read X only near the borders (DeepLab's
// ASPP), these read each tap's W once, where padding_free_boxes reads a
// tap's W once for every box that has it (a 3x3 window on a 14x14 map,
// dilated by 12: 9 taps of W, against 25 in the 9 padding-free boxes). The
// boxes overlap: their sums add up.
std::vector<ConvBox> tap_boxes(const ConvWindow &w);

// The taps of W that the boxes read, counted once per box (the product of
// each box's tap ranges): how much of W the boxes stream.
int64_t boxes_weight_taps(const std::vector<ConvBox> &boxes);

// The boxes' multiply-adds over the whole window's (per input channel and
// output channel): how much of the full convolution's work reads X.
double boxes_work_fraction(const ConvWindow &w, const std::vector<ConvBox> &boxes);

}  // namespace disco
