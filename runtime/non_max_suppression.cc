#include "runtime/non_max_suppression.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "frontend/errors.h"

namespace disco {

namespace {

// A box as NonMaxSuppression compares it: corners and area, computed once per
// box.
struct NmsBox {
  float y1, x1, y2, x2, area;
};

NmsBox nms_box(const float *p, bool center) {
  NmsBox b;
  if (center) {
    b.y1 = p[1] - p[3] / 2;
    b.y2 = p[1] + p[3] / 2;
    b.x1 = p[0] - p[2] / 2;
    b.x2 = p[0] + p[2] / 2;
  } else {
    b.y1 = std::min(p[0], p[2]);
    b.y2 = std::max(p[0], p[2]);
    b.x1 = std::min(p[1], p[3]);
    b.x2 = std::max(p[1], p[3]);
  }
  b.area = (b.y2 - b.y1) * (b.x2 - b.x1);
  return b;
}

float iou(const NmsBox &a, const NmsBox &b) {
  float ih = std::max(0.f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  float iw = std::max(0.f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  float inter = ih * iw, uni = a.area + b.area - inter;
  return uni <= 0 ? 0.f : inter / uni;
}

// The kept boxes of one (batch, class), found by position. torchvision's
// batched_nms exports every class of every proposal as one class, its boxes
// shifted apart by class: almost all are kept and almost none overlap, so
// comparing each candidate with every kept box is quadratic in the boxes
// (ssdlite, 3234 anchors x 91 classes at score threshold 0.01: minutes).
//
// With iou_threshold >= 0, a kept box suppresses a candidate only if their
// interiors intersect (IoU > 0 needs a positive intersection), and then both
// cover a common point, so they share a cell of a grid laid over all the
// candidates: a candidate is compared with the kept boxes of its cells only.
// Cell indices are monotone in the coordinates, so this holds in float too.
// Boxes that span many cells, or whose corners are not finite, go to a list
// that every candidate checks (and such a candidate checks every kept box).
class KeptBoxes {
 public:
  KeptBoxes(const std::vector<NmsBox> &boxes, const std::vector<int64_t> &cand, float iou_th)
      : boxes_(boxes), iou_th_(iou_th) {
    grid_ = iou_th >= 0 && cand.size() > kMinBoxesForGrid;
    if (!grid_) return;
    double y0 = INFINITY, x0 = INFINITY, y1 = -INFINITY, x1 = -INFINITY, side = 0;
    int64_t finite = 0;
    for (int64_t i : cand) {
      const NmsBox &b = boxes[i];
      if (!finite_box(b)) continue;
      y0 = std::min<double>(y0, b.y1), x0 = std::min<double>(x0, b.x1);
      y1 = std::max<double>(y1, b.y2), x1 = std::max<double>(x1, b.x2);
      side += std::max<double>(b.y2 - b.y1, b.x2 - b.x1);
      ++finite;
    }
    if (finite == 0) {
      grid_ = false;
      return;
    }
    // Cells about the mean box side, at most kMaxCellsPerAxis along each axis.
    side = std::max(side / static_cast<double>(finite), 1e-30);
    y0_ = y0, x0_ = x0;
    rows_ = std::clamp<int64_t>(static_cast<int64_t>((y1 - y0) / side) + 1, 1, kMaxCellsPerAxis);
    cols_ = std::clamp<int64_t>(static_cast<int64_t>((x1 - x0) / side) + 1, 1, kMaxCellsPerAxis);
    cell_h_ = std::max((y1 - y0) / static_cast<double>(rows_), 1e-30);
    cell_w_ = std::max((x1 - x0) / static_cast<double>(cols_), 1e-30);
    cells_.resize(static_cast<size_t>(rows_ * cols_));
  }

  size_t size() const { return all_.size(); }
  const std::vector<int64_t> &in_order() const { return all_; }  // as added

  bool suppresses(int64_t c) const {
    const NmsBox &b = boxes_[c];
    Span s;
    if (!grid_ || !span(b, &s)) {
      for (int64_t k : all_)
        if (iou(b, boxes_[k]) > iou_th_) return true;
      return false;
    }
    for (int64_t k : wide_)
      if (iou(b, boxes_[k]) > iou_th_) return true;
    for (int64_t r = s.r0; r <= s.r1; ++r)
      for (int64_t q = s.c0; q <= s.c1; ++q)
        for (int64_t k : cells_[r * cols_ + q])
          if (iou(b, boxes_[k]) > iou_th_) return true;
    return false;
  }

  void add(int64_t k) {
    all_.push_back(k);
    if (!grid_) return;
    Span s;
    if (!span(boxes_[k], &s)) {
      wide_.push_back(k);
      return;
    }
    for (int64_t r = s.r0; r <= s.r1; ++r)
      for (int64_t q = s.c0; q <= s.c1; ++q) cells_[r * cols_ + q].push_back(k);
  }

 private:
  static constexpr size_t kMinBoxesForGrid = 64;
  static constexpr int64_t kMaxCellsPerAxis = 1024;
  static constexpr int64_t kMaxCellsPerBox = 64;

  struct Span {
    int64_t r0, r1, c0, c1;
  };

  static bool finite_box(const NmsBox &b) {
    return std::isfinite(b.y1) && std::isfinite(b.x1) && std::isfinite(b.y2) && std::isfinite(b.x2);
  }

  int64_t cell(double v, double origin, double size, int64_t n) const {
    return std::clamp<int64_t>(static_cast<int64_t>(std::floor((v - origin) / size)), 0, n - 1);
  }

  // The cells a box covers; false for a box that goes to the checked-by-all list.
  bool span(const NmsBox &b, Span *s) const {
    if (!finite_box(b)) return false;
    s->r0 = cell(b.y1, y0_, cell_h_, rows_), s->r1 = cell(b.y2, y0_, cell_h_, rows_);
    s->c0 = cell(b.x1, x0_, cell_w_, cols_), s->c1 = cell(b.x2, x0_, cell_w_, cols_);
    return (s->r1 - s->r0 + 1) * (s->c1 - s->c0 + 1) <= kMaxCellsPerBox;
  }

  const std::vector<NmsBox> &boxes_;
  float iou_th_;
  bool grid_ = false;
  double y0_ = 0, x0_ = 0, cell_h_ = 1, cell_w_ = 1;
  int64_t rows_ = 1, cols_ = 1;
  std::vector<std::vector<int64_t>> cells_;
  std::vector<int64_t> wide_, all_;
};

}  // namespace

// Greedy per (batch, class), as ONNX's reference: candidates by descending
// score (ties in index order), each kept unless it overlaps a kept box by more
// than iou_threshold, until max_output_boxes_per_class are kept.
std::vector<TensorData> non_max_suppression(const std::vector<const TensorData *> &in, const HostAttrs &attrs) {
  const TensorData &boxes = *in.at(0), &scores = *in.at(1);
  auto scalar = [&](size_t i, double dflt) { return in.size() > i && in[i] && in[i]->num_elements() ? in[i]->float_at(0) : dflt; };
  // An integer, read as one: torchvision exports INT64_MAX ("no limit"), which as a double
  // rounds to 2^63, whose conversion back to int64 overflows (INT64_MIN on x86: no box kept).
  const int64_t max_out = in.size() > 2 && in[2] && in[2]->num_elements() ? in[2]->int_at(0) : 0;
  const float iou_th = static_cast<float>(scalar(3, 0)), score_th = static_cast<float>(scalar(4, -INFINITY));
  const bool has_score_th = in.size() > 4 && in[4];
  const bool center = attrs.count("center_point_box") && attrs.at("center_point_box") != 0;
  DISCO_CHECK(boxes.dtype == DType::F32 && scores.dtype == DType::F32, "NonMaxSuppression needs float32 boxes and scores");
  const int64_t batches = scores.shape.at(0), classes = scores.shape.at(1), n = scores.shape.at(2);
  std::vector<int64_t> sel;
  std::vector<NmsBox> bx(static_cast<size_t>(n));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) bx[i] = nms_box(boxes.as<float>() + (b * n + i) * 4, center);
    for (int64_t c = 0; c < classes; ++c) {
      const float *sc = scores.as<float>() + (b * classes + c) * n;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i)
        if (!has_score_th || sc[i] > score_th) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
      KeptBoxes kept(bx, cand, iou_th);
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        if (!kept.suppresses(i)) kept.add(i);
      }
      for (int64_t k : kept.in_order()) sel.insert(sel.end(), {b, c, k});
    }
  }
  TensorData out(DType::I64, {static_cast<int64_t>(sel.size() / 3), 3});
  std::copy(sel.begin(), sel.end(), out.mutable_as<int64_t>());
  return {out};
}

}  // namespace disco
