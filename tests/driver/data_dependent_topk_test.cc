// TopK whose k is computed from the data (lowering/ops/data_dependent_ops.h):
// SSD's and RetinaNet's postprocessing take the top min(k, kept) of the scores
// that passed a threshold. It runs as the host op TopKDynamic and binds its
// output extent at run time, so one compile serves every k. And
// NonMaxSuppression as torchvision exports it, with no limit (INT64_MAX) on
// the boxes per class. Hand references.
#include <gtest/gtest.h>

#include <cmath>
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

// y, i = TopK(x, k = min(3, number of x > 0)) along axis 1 of x [2, n]:
// k counts the positive elements of the whole x, from the data.
Graph topk_of_positives(bool largest) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {2, Dim::symbol("n")});
  auto zero = b.constant("zero", f32({}, {0.f}));
  auto positive = b.op("Cast", {b.op("Greater", {x, zero})}, attrs({{"to", attr_int(7)}}));
  auto count = b.op("ReduceSum", {b.op("Reshape", {positive, b.constant("flat", testing::i64({1}, {-1}))})},
                    attrs({{"keepdims", attr_int(1)}}));
  auto k = b.op("Min", {count, b.constant("three", testing::i64({1}, {3}))});
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

}  // namespace
}  // namespace disco
