// TopK whose k is computed from the data (lowering/ops/data_dependent_ops.h):
// SSD's and RetinaNet's postprocessing take the top min(k, kept) of the scores
// that passed a threshold. It runs as the host op TopKDynamic and binds its
// output extent at run time, so one compile serves every k. And
// NonMaxSuppression as torchvision exports it, with no limit (INT64_MAX) on
// the boxes per class. Hand references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::f32;
using testing::floats;

CompileOptions options() {
  CompileOptions o;
  o.use_cache = false;
  return o;
}

Attributes attrs(std::initializer_list<std::pair<const std::string, Attribute>> a) { return Attributes(a); }

// y, i = TopK(x, k = min(most, number of x > 0)) along axis 1 of x [2, n]:
// k counts the positive elements of the whole x, from the data.
Graph topk_of_positives(bool largest, int64_t most = 3) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {2, Dim::symbol("n")});
  auto zero = b.constant("zero", f32({}, {0.f}));
  auto positive = b.op("Cast", {b.op("Greater", {x, zero})}, attrs({{"to", attr_int(7)}}));
  auto count = b.op("ReduceSum", {b.op("Reshape", {positive, b.constant("flat", testing::i64({1}, {-1}))})},
                    attrs({{"keepdims", attr_int(1)}}));
  auto k = b.op("Min", {count, b.constant("most", testing::i64({1}, {most}))});
  auto outs = b.op_n("TopK", {x, k}, 2, attrs({{"axis", attr_int(1)}, {"largest", attr_int(largest ? 1 : 0)}}));
  b.output(outs[0]);
  b.output(outs[1]);
  return b.build();
}

TEST(DataDependentTopK, KFromTheDataBindsTheOutputExtentAtRunTime) {
  Session s(topk_of_positives(true), "topk_dynamic", "", options());
  EXPECT_TRUE(s.value_inputs().empty()) << "x was compiled in";
  // Two positives: k = 2; ties in index order, -0 equal to +0.
  auto out = s.run({f32({2, 4}, {-1.f, 2.f, -0.f, 0.f, 5.f, -3.f, 0.f, -0.f})});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{2, -0.0, 5, 0}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{1, 2, 0, 2}));
  // Five positives, another n: k = 3, the same compile.
  out = s.run({f32({2, 5}, {1.f, 4.f, 4.f, -2.f, 3.f, -1.f, 7.f, -5.f, 2.f, -6.f})});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{4, 4, 3, 7, 2, -1}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{1, 2, 4, 1, 3, 0}));
  // None: k = 0, empty outputs.
  out = s.run({f32({2, 3}, {-1.f, -2.f, -3.f, -4.f, -5.f, -6.f})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(s.compiles(), 1);
}

// torchvision's _topk_min: k = min(3, the axis' extent) from a ReduceMin of
// [3, Shape(x)[1]]: a folded shape value, min(3, n), that TopK's kernels
// cannot take as a constant, so the session compiled each n in. Now it runs
// as TopKDynamic, one compile for every n. Hand references.
TEST(DataDependentTopK, KFoldedFromShapesIsOneCompileForEveryExtent) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {2, Dim::symbol("n")});
  auto n = b.op("Slice", {b.op("Shape", {x}), b.constant("one", testing::i64({1}, {1})),
                          b.constant("two", testing::i64({1}, {2}))});
  auto both = b.op("Concat", {b.constant("most", testing::i64({1}, {3})), n}, attrs({{"axis", attr_int(0)}}));
  auto k = b.op("ReduceMin", {both}, attrs({{"keepdims", attr_int(1)}}));
  auto outs = b.op_n("TopK", {x, k}, 2, attrs({{"axis", attr_int(1)}}));
  b.output(outs[0]);
  b.output(outs[1]);
  Session s(b.build(), "topk_folded_k", "", options());
  EXPECT_TRUE(s.value_inputs().empty()) << "x was compiled in";
  auto out = s.run({f32({2, 2}, {1.f, 5.f, 4.f, -2.f})});  // k = 2
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 1, 4, -2}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{1, 0, 0, 1}));
  out = s.run({f32({2, 5}, {1.f, 4.f, 9.f, -2.f, 3.f, -1.f, 7.f, -5.f, 2.f, 6.f})});  // k = 3
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{9, 4, 3, 7, 6, 2}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 1, 4, 1, 4, 3}));
  EXPECT_EQ(s.compiles(), 1);
}

// k = min(100, positives) of 2 rows of 6000 values on 40 levels: ties all
// through the top 100, which must come in index order, as a stable sort of
// the whole row gives them.
TEST(DataDependentTopK, TheTopHundredOfThousandsOfTiedValuesComeInIndexOrder) {
  const int64_t n = 6000, k = 100;
  std::vector<float> xv(2 * n);
  for (int64_t i = 0; i < 2 * n; ++i) xv[i] = static_cast<float>((i * 7919) % 40) - 3.f;
  for (bool largest : {true, false}) {
    SCOPED_TRACE(largest ? "largest" : "smallest");
    Session s(topk_of_positives(largest, k), "topk_ties", "", options());
    auto out = s.run({f32({2, n}, xv)});
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, k}));
    std::vector<double> want_v, want_i;
    for (int64_t r = 0; r < 2; ++r) {
      std::vector<int64_t> order(n);
      for (int64_t j = 0; j < n; ++j) order[j] = j;
      const float *row = &xv[r * n];
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t c) { return largest ? row[a] > row[c] : row[a] < row[c]; });
      for (int64_t j = 0; j < k; ++j) want_v.push_back(row[order[j]]), want_i.push_back(double(order[j]));
    }
    EXPECT_EQ(floats(out[0]), want_v);
    EXPECT_EQ(floats(out[1]), want_i);
  }
}

TEST(DataDependentTopK, SmallestFirstWithNaNLast) {
  Session s(topk_of_positives(false), "topk_dynamic_smallest", "", options());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = s.run({f32({2, 4}, {nan, 3.f, 1.f, 2.f, 2.f, nan, -1.f, 2.f})});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));  // 5 positives: k = 3
  EXPECT_EQ(floats(out[1]), (std::vector<double>{2, 3, 1, 2, 0, 3}));
}

TEST(DataDependentTopK, NonMaxSuppressionWithInt64MaxBoxesPerClassKeepsAll) {
  GraphBuilder b;
  const Dim n = Dim::symbol("n");
  auto boxes = b.input("boxes", DType::F32, {1, n, 4});
  auto scores = b.input("scores", DType::F32, {1, 1, n});
  auto most = b.constant("most", testing::i64({1}, {std::numeric_limits<int64_t>::max()}));
  auto iou = b.constant("iou", f32({1}, {0.5f}));
  b.output(b.op("NonMaxSuppression", {boxes, scores, most, iou}));
  Session s(b.build(), "nms_no_limit", "", options());
  // Box 1 overlaps box 0 (IoU 1 / 1.05) with a lower score: suppressed.
  auto out = s.run({f32({1, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 1.05f, 2, 2, 3, 3}), f32({1, 1, 3}, {0.9f, 0.8f, 0.7f})});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floats(out[0]), (std::vector<double>{0, 0, 0, 0, 0, 2}));
}

// A plain NonMaxSuppression (corner boxes): every candidate, by descending
// score with ties in index order, compared with every kept box of its class.
std::vector<double> nms_reference(const std::vector<float> &boxes, const std::vector<float> &scores, int64_t batches,
                                  int64_t classes, int64_t n, int64_t most, float iou_th, float score_th) {
  std::vector<double> sel;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const float *sc = &scores[(b * classes + c) * n];
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i)
        if (sc[i] > score_th) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) == most) break;
        int overlaps = 0;
        for (int64_t k : kept) {
          const float *p = &boxes[(b * n + i) * 4], *q = &boxes[(b * n + k) * 4];
          float h = std::max(0.f, std::min(std::max(p[0], p[2]), std::max(q[0], q[2])) -
                                      std::max(std::min(p[0], p[2]), std::min(q[0], q[2])));
          float w = std::max(0.f, std::min(std::max(p[1], p[3]), std::max(q[1], q[3])) -
                                      std::max(std::min(p[1], p[3]), std::min(q[1], q[3])));
          float ap = std::fabs(p[2] - p[0]) * std::fabs(p[3] - p[1]), aq = std::fabs(q[2] - q[0]) * std::fabs(q[3] - q[1]);
          float uni = ap + aq - h * w;
          if (uni > 0 && h * w / uni > iou_th) ++overlaps;
        }
        if (overlaps == 0) kept.push_back(i);
      }
      for (int64_t k : kept) sel.insert(sel.end(), {double(b), double(c), double(k)});
    }
  return sel;
}

// Thousands of boxes in clusters, as a detector's proposals come (2 images, 2
// classes, 3000 boxes on a quarter-pixel grid, many tied scores, a NaN corner,
// boxes wider than the field), with a score threshold, and a limit of 40 per
// class in a second model. disco looks the kept boxes up in a grid.
TEST(DataDependentTopK, NonMaxSuppressionOfThousandsOfClusteredBoxesMatchesAPlainScan) {
  const int64_t batches = 2, classes = 2, n = 3000;
  std::vector<float> boxes(batches * n * 4), scores(batches * classes * n);
  uint32_t r = 12345;
  auto next = [&r](int m) { return static_cast<int>((r = r * 1664525u + 1013904223u) >> 8) % m; };
  for (int64_t i = 0; i < batches * n; ++i) {
    float cy = 8.f * next(12), cx = 8.f * next(12);  // 144 cluster centres
    float y1 = cy + 0.25f * next(16), x1 = cx + 0.25f * next(16);
    float y2 = y1 + 2 + 0.25f * next(24), x2 = x1 + 2 + 0.25f * next(24);
    bool flipped = next(4) == 0;  // corners in either order
    boxes[i * 4 + 0] = flipped ? y2 : y1;
    boxes[i * 4 + 1] = x1;
    boxes[i * 4 + 2] = flipped ? y1 : y2;
    boxes[i * 4 + 3] = x2;
  }
  // A box with a NaN corner, and boxes wider than the whole cluster field.
  boxes[7 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i : {11, 3011}) {
    boxes[i * 4 + 0] = -1000, boxes[i * 4 + 1] = -1000, boxes[i * 4 + 2] = 1000, boxes[i * 4 + 3] = 1000;
  }
  boxes[13 * 4 + 0] = -10, boxes[13 * 4 + 1] = -10, boxes[13 * 4 + 2] = 200, boxes[13 * 4 + 3] = 150;
  for (auto &v : scores) v = 0.01f * next(100);
  scores[11] = scores[13] = 0.995f;  // kept first: every later candidate meets them
  for (int64_t most : {std::numeric_limits<int64_t>::max(), int64_t{40}}) {
    SCOPED_TRACE("max boxes per class " + std::to_string(most));
    GraphBuilder b;
    const Dim dn = Dim::symbol("n");
    auto bx = b.input("boxes", DType::F32, {batches, dn, 4});
    auto sc = b.input("scores", DType::F32, {batches, classes, dn});
    auto m = b.constant("most", testing::i64({1}, {most}));
    auto iou = b.constant("iou", f32({1}, {0.5f}));
    auto th = b.constant("th", f32({1}, {0.2f}));
    b.output(b.op("NonMaxSuppression", {bx, sc, m, iou, th}));
    Session s(b.build(), "nms_many", "", options());
    auto out = s.run({f32({batches, n, 4}, boxes), f32({batches, classes, n}, scores)});
    std::vector<double> want = nms_reference(boxes, scores, batches, classes, n, most, 0.5f, 0.2f);
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{static_cast<int64_t>(want.size() / 3), 3}));
    // Many kept and many suppressed; with the limit, every class reaches it.
    if (most == 40)
      EXPECT_EQ(want.size() / 3, static_cast<size_t>(batches * classes * 40));
    else
      EXPECT_GT(want.size() / 3, 200u);
    EXPECT_EQ(floats(out[0]), want);
  }
}

}  // namespace
}  // namespace disco
