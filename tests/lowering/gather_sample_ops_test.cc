// Numeric tests of behaviour the ONNX backend tests leave out, for the
// gather/scatter family (lowering/ops/gather_scatter_ops.cc), TopK
// (topk_ops.cc) and RoiAlign (sampling_ops.cc): ties, the opset-18
// reductions, out-of-range indices and adaptive sampling.
#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim n = Dim::symbol("n"), m = Dim::symbol("m");

TEST(GatherScatterOps, TopKKeepsEqualValuesInIndexOrder) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, n});
  auto k = b.constant("k", i64({1}, {3}));
  auto outs = b.op_n("TopK", {x, k}, 2);
  b.output(outs[0]);
  b.output(outs[1]);
  auto out = testing::jit_eval(b.build(), {f32({1, 5}, {2, 5, 2, 5, 1})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 5, 2}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{1, 3, 0}));
}

TEST(GatherScatterOps, ScatterElementsMaxAndMinReductions) {
  for (const char *red : {"max", "min"}) {
    GraphBuilder b(18);
    auto data = b.input("data", DType::F32, {1, n});
    auto idx = b.input("idx", DType::I64, {1, m});
    auto upd = b.input("upd", DType::F32, {1, m});
    b.output(
        b.op("ScatterElements", {data, idx, upd}, attrs({{"axis", attr_int(1)}, {"reduction", attr_string(red)}})));
    auto out = testing::jit_eval(b.build(), {f32({1, 3}, {1, 2, 3}), i64({1, 3}, {1, 1, -1}), f32({1, 3}, {5, -4, 0})});
    if (std::string(red) == "max")
      EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 5, 3}));
    else
      EXPECT_EQ(floats(out[0]), (std::vector<double>{1, -4, 0}));
  }
}

TEST(GatherScatterOps, OutOfRangeIndicesAreClampedNotReadOutOfBounds) {
  GraphBuilder b;
  auto data = b.input("data", DType::F32, {n, 2});
  auto idx = b.input("idx", DType::I64, {1, 2});
  b.output(b.op("GatherElements", {data, idx}));
  auto out = testing::jit_eval(b.build(), {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {1000000, -1000000})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{3, 2}));
}

// On an image that is linear in (y, x), bilinear samples are exact, so the
// average over a bin is the image at the mean sample position.
TEST(SamplingOps, RoiAlignAdaptiveSamplingAveragesTheBin) {
  GraphBuilder b(16);
  auto x = b.input("x", DType::F32, {1, 1, n, m});
  auto rois = b.input("rois", DType::F32, {1, 4});
  auto bi = b.input("bi", DType::I64, {1});
  b.output(b.op("RoiAlign", {x, rois, bi}, attrs({{"output_height", attr_int(1)}, {"output_width", attr_int(1)}})));
  auto out = testing::jit_eval(b.build(), {iota_f32({1, 1, 4, 4}), f32({1, 4}, {0, 0, 3, 3}), i64({1}, {0})});
  // half_pixel: the region is [-0.5, 2.5), three samples per axis at 0, 1, 2.
  EXPECT_EQ(out[0].shape, (Shape64{1, 1, 1, 1}));
  EXPECT_NEAR(floats(out[0])[0], 4 * 1 + 1, 1e-5);
}

}  // namespace
}  // namespace disco
