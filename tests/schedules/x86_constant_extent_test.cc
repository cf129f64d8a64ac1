// Kernels whose output extents are compile-time constants with a tail (17
// rows in vectors of 16): ArgMax, ArgMin, Hardmax, TopK and a chain of
// Gathers, at every row count around the vector width (16 float32 lanes with
// AVX-512, 8 with AVX2), against plain loops.
//
// Halide 14 mis-partitions GuardWithIf vector loops over an output whose
// constant extent it is told: ArgMax over 17 rows returned 0 for row 16, and
// keypointrcnn's Gathers of 17 keypoint scores never wrote the last one (its
// loop kept 2 trips but lost its index). Scheduler::bound_outputs tells Halide
// only constant extents that are multiples of 64.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "tests/support/host_schedules.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// Few distinct values, so that rows hold ties and select_last_index matters.
std::vector<float> tied_values(int64_t n, int seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37 + seed * 11 + (i / 7) * 5) % 29) * 0.25f;
  return v;
}

// The index along `axis` (0 or 1) of [rows, cols] that ArgMax/ArgMin picks.
std::vector<int64_t> arg_reference(const std::vector<float> &x, int64_t rows, int64_t cols, int axis, bool is_max,
                                   bool last) {
  const int64_t kept = axis == 1 ? rows : cols, along = axis == 1 ? cols : rows;
  std::vector<int64_t> out(kept);
  for (int64_t k = 0; k < kept; ++k) {
    int64_t best = 0;
    auto at = [&](int64_t i) { return axis == 1 ? x[k * cols + i] : x[i * cols + k]; };
    for (int64_t i = 1; i < along; ++i) {
      float a = at(i), b = at(best);
      bool better = is_max ? (last ? a >= b : a > b) : (last ? a <= b : a < b);
      if (better) best = i;
    }
    out[k] = best;
  }
  return out;
}

void expect_arg(const std::string &op, int64_t rows, int64_t cols, int axis, bool last) {
  SCOPED_TRACE(op + " of [" + std::to_string(rows) + ", " + std::to_string(cols) + "] along axis " +
               std::to_string(axis) + (last ? ", last index" : ", first index"));
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {rows, cols});
  b.output(b.op(op, {x}, {{"axis", attr_int(axis)}, {"keepdims", attr_int(0)}, {"select_last_index", attr_int(last)}}));
  HostCompiled c = compile_on_host(b.build(), "arg");
  Executor exec(c.model.plan, c.model.dir);
  std::vector<float> xv = tied_values(rows * cols, static_cast<int>(rows));
  auto out = exec.run({f32({rows, cols}, xv)});
  EXPECT_EQ(out[0].to_int64(), arg_reference(xv, rows, cols, axis, op == "ArgMax", last));
}

TEST(X86ConstantExtent, ArgMaxAndArgMinOverEveryRowCountAroundTheVectorWidth) {
  for (int64_t rows : {1, 7, 9, 16, 17, 31, 33}) {
    expect_arg("ArgMax", rows, 100, 1, false);
    expect_arg("ArgMin", rows, 100, 1, true);
  }
}

TEST(X86ConstantExtent, ArgMaxAlongTheOuterAxisAndShortRows) {
  for (int64_t cols : {9, 17, 33}) expect_arg("ArgMax", 100, cols, 0, false);
  expect_arg("ArgMax", 17, 7, 1, false);
  expect_arg("ArgMin", 17, 16, 1, false);
}

TEST(X86ConstantExtent, HardmaxOfSeventeenRows) {
  const int64_t rows = 17, cols = 100;
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {rows, cols});
  b.output(b.op("Hardmax", {x}, {{"axis", attr_int(-1)}}));
  HostCompiled c = compile_on_host(b.build(), "hardmax");
  Executor exec(c.model.plan, c.model.dir);
  std::vector<float> xv = tied_values(rows * cols, 3);
  auto out = exec.run({f32({rows, cols}, xv)});
  std::vector<int64_t> pick = arg_reference(xv, rows, cols, 1, true, false);
  const float *po = out[0].as<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < cols; ++i) ASSERT_EQ(po[r * cols + i], i == pick[r] ? 1.f : 0.f) << "row " << r << " col " << i;
}

TEST(X86ConstantExtent, TopKOfSeventeenAndThirtyThreeRows) {
  for (int64_t rows : {17, 33}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    const int64_t cols = 64, k = 2;
    GraphBuilder b(13);
    auto x = b.input("x", DType::F32, {rows, cols});
    auto kk = b.constant("k", i64({1}, {k}));
    auto outs = b.op_n("TopK", {x, kk}, 2, {{"axis", attr_int(1)}});
    b.output(outs[0]);
    b.output(outs[1]);
    HostCompiled c = compile_on_host(b.build(), "topk");
    Executor exec(c.model.plan, c.model.dir);
    // Distinct values within a row: TopK's order among ties is not what this tests.
    std::vector<float> xv(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i) xv[i] = static_cast<float>((i * 7919) % 1009);
    auto out = exec.run({f32({rows, cols}, xv)});
    auto idx = out[1].to_int64();
    const float *pv = out[0].as<float>();
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> order;
      for (int64_t j = 0; j < k; ++j) {
        int64_t best = -1;
        for (int64_t i = 0; i < cols; ++i) {
          bool taken = false;
          for (int64_t t : order) taken = taken || t == i;
          if (!taken && (best < 0 || xv[r * cols + i] > xv[r * cols + best])) best = i;
        }
        order.push_back(best);
      }
      for (int64_t j = 0; j < k; ++j) {
        ASSERT_EQ(idx[r * k + j], order[j]) << "row " << r << " rank " << j;
        ASSERT_EQ(pv[r * k + j], xv[r * cols + order[j]]) << "row " << r << " rank " << j;
      }
    }
  }
}

// torchvision's keypoint scores at export (_onnx_heatmaps_to_keypoints): the
// maps [17, h, w] gathered at each keypoint's row, then column, flattened, and
// every 307th value (17 * 17 + 17 + 1) taken: map k at (y[k], x[k]).
TEST(X86ConstantExtent, GathersOfSeventeenKeypointScores) {
  const int64_t k = 17, h = 6, w = 5;
  GraphBuilder b(11);
  auto maps = b.input("maps", DType::F32, {k, Dim::symbol("h"), Dim::symbol("w")});
  auto ys = b.input("ys", DType::I64, {k});
  auto xs = b.input("xs", DType::I64, {k});
  std::vector<int64_t> every(k);
  for (int64_t i = 0; i < k; ++i) every[i] = i * (k * k + k + 1);
  auto rows = b.op("Gather", {maps, ys}, {{"axis", attr_int(1)}});
  auto cols = b.op("Gather", {rows, xs}, {{"axis", attr_int(2)}});
  auto flat = b.op("Reshape", {cols, b.constant("minus_one", i64({1}, {-1}))});
  b.output(b.op("Gather", {flat, b.constant("every", i64({k}, every))}, {{"axis", attr_int(0)}}));
  HostCompiled c = compile_on_host(b.build(), "keypoints");
  Executor exec(c.model.plan, c.model.dir);
  std::vector<float> mv(k * h * w);
  for (size_t i = 0; i < mv.size(); ++i) mv[i] = static_cast<float>(i) * 0.5f;
  std::vector<int64_t> yv(k), xv(k);
  for (int64_t i = 0; i < k; ++i) yv[i] = (i * 5) % h, xv[i] = (i * 3 + 1) % w;
  auto out = exec.run({f32({k, h, w}, mv), i64({k}, yv), i64({k}, xv)});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{k}));
  const float *po = out[0].as<float>();
  for (int64_t i = 0; i < k; ++i) EXPECT_EQ(po[i], mv[(i * h + yv[i]) * w + xv[i]]) << "keypoint " << i;
}

}  // namespace
}  // namespace disco
