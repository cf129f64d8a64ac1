// Numeric tests of behaviour the ONNX backend tests leave out, for the
// gather/scatter family (lowering/ops/gather_scatter_ops.cc), TopK
// (topk_ops.cc) and RoiAlign (sampling_ops.cc): ties, the opset-18
// reductions, out-of-range indices and adaptive sampling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>

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

// TopK's order by std::stable_sort: by value (largest or smallest first),
// equal values in index order. Rows along `axis` of a [rows, cols] tensor.
std::pair<std::vector<double>, std::vector<double>> topk_reference(const std::vector<float> &x, int64_t rows,
                                                                   int64_t cols, int axis, int64_t k,
                                                                   bool largest) {
  const int64_t lines = axis == 1 ? rows : cols, len = axis == 1 ? cols : rows;
  std::vector<double> values(lines * k), indices(lines * k);
  for (int64_t l = 0; l < lines; ++l) {
    auto at = [&](int64_t i) { return axis == 1 ? x[l * cols + i] : x[i * cols + l]; };
    std::vector<int64_t> order(len);
    for (int64_t i = 0; i < len; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return largest ? at(a) > at(b) : at(a) < at(b); });
    for (int64_t p = 0; p < k; ++p) {
      const int64_t o = axis == 1 ? l * k + p : p * cols + l;
      values[o] = at(order[p]);
      indices[o] = static_cast<double>(order[p]);
    }
  }
  return {values, indices};
}

// Small k runs as selection passes over ordered keys, large k as ranks: both
// against the stable sort, on values with many ties, negative and zero ones
// (-0 equal to +0), along either axis, largest and smallest.
TEST(GatherScatterOps, TopKMatchesAStableSortForSmallAndLargeK) {
  const int64_t rows = 7, cols = 40;
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>((i * 7919) % 23) - 11) * 0.5f;
  x[3] = -0.0f;
  for (int axis : {0, 1})
    for (bool largest : {true, false})
      for (int64_t k : {int64_t(1), int64_t(3), int64_t(5), int64_t(18)}) {
        if (axis == 0 && k > rows) continue;
        GraphBuilder b;
        auto in = b.input("x", DType::F32, {n, m});
        auto kk = b.constant("k", i64({1}, {k}));
        auto outs =
            b.op_n("TopK", {in, kk}, 2, attrs({{"axis", attr_int(axis)}, {"largest", attr_int(largest ? 1 : 0)}}));
        b.output(outs[0]);
        b.output(outs[1]);
        auto out = testing::jit_eval(b.build(), {f32({rows, cols}, x)});
        auto [values, indices] = topk_reference(x, rows, cols, axis, k, largest);
        SCOPED_TRACE("axis " + std::to_string(axis) + " k " + std::to_string(k) + (largest ? " largest" : " smallest"));
        EXPECT_EQ(floats(out[0]), values);
        EXPECT_EQ(floats(out[1]), indices);
      }
}

// Rows known to be long (>= 1024) keep no values in the fold's slots and read
// them back from the input: static extents, along either axis.
TEST(GatherScatterOps, TopKOfLongStaticRowsMatchesAStableSort) {
  const int64_t rows = 3, cols = 1500;
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>((i * 7919) % 23) - 11) * 0.5f;
  for (int axis : {0, 1})
    for (bool largest : {true, false})
      for (int64_t k : {int64_t(1), int64_t(4)}) {
        const int64_t r = axis == 1 ? rows : cols, c = axis == 1 ? cols : rows;
        std::vector<float> t(x.size());  // x laid out as [r, c], the long axis `axis`
        for (int64_t i = 0; i < r; ++i)
          for (int64_t j = 0; j < c; ++j) t[i * c + j] = axis == 1 ? x[i * c + j] : x[j * r + i];
        GraphBuilder b;
        auto in = b.input("x", DType::F32, {r, c});
        auto kk = b.constant("k", i64({1}, {k}));
        auto outs =
            b.op_n("TopK", {in, kk}, 2, attrs({{"axis", attr_int(axis)}, {"largest", attr_int(largest ? 1 : 0)}}));
        b.output(outs[0]);
        b.output(outs[1]);
        auto out = testing::jit_eval(b.build(), {f32({r, c}, t)});
        auto [values, indices] = topk_reference(t, r, c, axis, k, largest);
        SCOPED_TRACE("axis " + std::to_string(axis) + " k " + std::to_string(k) + (largest ? " largest" : " smallest"));
        EXPECT_EQ(floats(out[0]), values);
        EXPECT_EQ(floats(out[1]), indices);
      }
}

// NaN ranks above +inf (PyTorch's order for NaNs without the sign bit), and
// -0 equals +0: equal values in index order, each output the input's bits.
TEST(GatherScatterOps, TopKRanksNaNAboveInfinityAndZerosInIndexOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{1, nan, -inf, -0.0f, 0.0f, inf, nan, -1};
  for (bool largest : {true, false}) {
    GraphBuilder b;
    auto in = b.input("x", DType::F32, {1, n});
    auto kk = b.constant("k", i64({1}, {8}));
    auto outs = b.op_n("TopK", {in, kk}, 2, attrs({{"largest", attr_int(largest ? 1 : 0)}}));
    b.output(outs[0]);
    b.output(outs[1]);
    auto out = testing::jit_eval(b.build(), {f32({1, 8}, x)});
    const std::vector<double> expected =
        largest ? std::vector<double>{1, 6, 5, 0, 3, 4, 7, 2} : std::vector<double>{2, 7, 3, 4, 0, 5, 1, 6};
    SCOPED_TRACE(largest ? "largest" : "smallest");
    ASSERT_EQ(floats(out[1]), expected);
    const float *v = out[0].as<float>();
    for (size_t p = 0; p < expected.size(); ++p) {
      const float want = x[static_cast<size_t>(expected[p])];
      EXPECT_EQ(std::memcmp(&v[p], &want, sizeof want), 0) << "position " << p;
    }
  }
}

TEST(GatherScatterOps, TopKOfInt32Values) {
  GraphBuilder b;
  auto in = b.input("x", DType::I32, {1, n});
  auto k = b.constant("k", i64({1}, {3}));
  auto outs = b.op_n("TopK", {in, k}, 2, attrs({{"largest", attr_int(0)}}));
  b.output(outs[0]);
  b.output(outs[1]);
  auto out = testing::jit_eval(b.build(), {i32({1, 6}, {7, -2147483647 - 1, 5, 2147483647, -3, -3})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{-2147483648.0, -3, -3}));
  EXPECT_EQ(floats(out[1]), (std::vector<double>{1, 4, 5}));
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
