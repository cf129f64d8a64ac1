// Tuple-valued reductions (ArgMax, ArgMin, Hardmax, TopK) on the host
// schedules at static shapes: every row count around the vector width (16
// float32 lanes with AVX-512, 8 with AVX2), against plain loops.
//
// Halide 14 loses the vector tail of a Tuple-valued update split with
// GuardWithIf when the extent is a compile-time constant: ArgMax over 17
// rows returned 0 for row 16 (keypointrcnn's 17 keypoints, every row's last
// keypoint wrong). schedule_updates unrolls such updates instead.
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

TEST(X86TupleUpdate, ArgMaxAndArgMinOverEveryRowCountAroundTheVectorWidth) {
  for (int64_t rows : {1, 7, 9, 16, 17, 31, 33}) {
    expect_arg("ArgMax", rows, 100, 1, false);
    expect_arg("ArgMin", rows, 100, 1, true);
  }
}

TEST(X86TupleUpdate, ArgMaxAlongTheOuterAxisAndShortRows) {
  for (int64_t cols : {9, 17, 33}) expect_arg("ArgMax", 100, cols, 0, false);
  expect_arg("ArgMax", 17, 7, 1, false);
  expect_arg("ArgMin", 17, 16, 1, false);
}

TEST(X86TupleUpdate, HardmaxOfSeventeenRows) {
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

TEST(X86TupleUpdate, TopKOfSeventeenAndThirtyThreeRows) {
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

}  // namespace
}  // namespace disco
