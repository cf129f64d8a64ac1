// NaN inputs through the compiled host kernels: max, min and the ops built on
// them give NaN where an operand is NaN, as numpy and PyTorch do. Halide
// compiles floats under no-NaNs flags, and with Halide's own max Relu(NaN)
// came out 0, Clip(NaN) its lower bound, Max and Min the other operand, and
// ReduceMax and ReduceMin skipped NaNs. Each op is compiled alone, with the
// host schedules (the row and column folds of the reductions, vectorized), at
// shapes with vector tails; the reference is written out here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "tests/support/host_schedules.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t A = 3, B = 37, C = 67;  // 67 = 4 * 16 + 3: a tail in every row

// [A, B, C] values with NaNs of both signs (x86's own NaN is negative),
// infinities, and rows without either.
std::vector<float> holey(int seed) {
  std::vector<float> v(A * B * C);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    const int64_t h = (i * 7919 + seed * 104729) % 1009;
    v[i] = static_cast<float>(h % 97 - 48) * 0.25f;
    if (h < 9) v[i] = h % 2 ? kNan : -kNan;
    if (h == 500) v[i] = kInf;
    if (h == 501) v[i] = -kInf;
  }
  for (int64_t j = 0; j < 5 * C; ++j) v[B * C + j] = static_cast<float>(j % 13) - 6.0f;  // rows of A=1 without NaNs
  return v;
}

std::vector<TensorData> run(Graph g, const std::string &name, const std::vector<TensorData> &inputs) {
  HostCompiled c = compile_on_host(std::move(g), name);
  Executor exec(c.model.plan, c.model.dir);
  return exec.run(inputs);
}

// Equal, NaN for NaN, or within `tol` relative.
void expect_same(const TensorData &got, const std::vector<float> &want, const std::string &what, float tol = 0) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  const float *g = got.as<float>();
  int nans = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    nans += std::isnan(want[i]);
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(g[i])) << what << " at " << i << ": " << g[i] << ", want NaN";
    } else if (tol == 0 || std::isinf(want[i])) {
      ASSERT_EQ(g[i], want[i]) << what << " at " << i;
    } else {
      ASSERT_NEAR(g[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at " << i;
    }
  }
  EXPECT_GT(nans, 0) << what << ": the case has no NaN to keep";
}

Shape symbolic() { return {Dim::symbol("a"), Dim::symbol("b"), Dim::symbol("c")}; }

float nan_max(float a, float b) { return std::isnan(a) ? a : std::isnan(b) ? b : std::max(a, b); }
float nan_min(float a, float b) { return std::isnan(a) ? a : std::isnan(b) ? b : std::min(a, b); }

TEST(X86NanPropagation, ElementwiseMaxMinAndTheirActivationsKeepNans) {
  const std::vector<float> xv = holey(1), yv = holey(2);
  const TensorData x = f32({A, B, C}, xv), y = f32({A, B, C}, yv);
  struct Case {
    std::string op;
    std::function<float(float, float)> ref;
    float tol = 0;
  };
  const std::vector<Case> cases{
      {"Relu", [](float a, float) { return nan_max(a, 0); }},
      {"Clip", [](float a, float) { return nan_min(nan_max(a, -1), 1); }},
      {"Max", nan_max},
      {"Min", nan_min},
      {"HardSigmoid", [](float a, float) { return nan_min(nan_max(0.2f * a + 0.5f, 0), 1); }, 1e-6f},
      {"Celu", [](float a, float) { return nan_max(a, 0) + nan_min(std::expm1(a), 0); }, 1e-6f},
  };
  for (const Case &k : cases) {
    GraphBuilder b(13);
    auto xi = b.input("x", DType::F32, symbolic());
    auto yi = b.input("y", DType::F32, symbolic());
    std::vector<std::string> in{xi};
    if (k.op == "Max" || k.op == "Min") in.push_back(yi);
    if (k.op == "Clip") {
      in.push_back(b.constant("lo", f32({}, {-1})));
      in.push_back(b.constant("hi", f32({}, {1})));
    }
    b.output(b.op(k.op, in));
    if (k.op != "Max" && k.op != "Min") b.output(b.op("Identity", {yi}));  // y is an input of every graph
    auto out = run(b.build(), "nan_" + k.op, {x, y});
    std::vector<float> want(xv.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = k.ref(xv[i], yv[i]);
    expect_same(out[0], want, k.op, k.tol);
  }
}

TEST(X86NanPropagation, ReduceMaxAndReduceMinKeepNansOverEveryAxis) {
  const std::vector<float> xv = holey(3);
  const TensorData x = f32({A, B, C}, xv);
  for (const char *op : {"ReduceMax", "ReduceMin"}) {
    const bool is_max = std::string(op) == "ReduceMax";
    for (int64_t axis : {2, 1, 0}) {  // rows (rfactor), middle and outer columns
      GraphBuilder b(13);
      auto xi = b.input("x", DType::F32, symbolic());
      b.output(b.op(op, {xi}, attrs({{"axes", attr_ints({axis})}, {"keepdims", attr_int(0)}})));
      auto out = run(b.build(), std::string("nan_") + op + std::to_string(axis), {x});
      const int64_t dims[3] = {A, B, C};
      const int64_t strides[3] = {B * C, C, 1};
      std::vector<float> want;
      for (int64_t i = 0; i < A; ++i)
        for (int64_t j = 0; j < B; ++j)
          for (int64_t k = 0; k < C; ++k) {
            const int64_t at[3] = {i, j, k};
            if (at[axis] != 0) continue;  // one result per kept position, in row-major order
            float r = is_max ? -kInf : kInf;
            for (int64_t t = 0; t < dims[axis]; ++t) {
              const float v = xv[i * strides[0] + j * strides[1] + k * strides[2] + t * strides[axis]];
              r = is_max ? nan_max(r, v) : nan_min(r, v);
            }
            want.push_back(r);
          }
      expect_same(out[0], want, std::string(op) + " over axis " + std::to_string(axis));
    }
  }
}

TEST(X86NanPropagation, HostMaxPoolingKeepsNans) {
  const std::vector<float> xv = holey(4);
  const TensorData x = f32({A, B, C}, xv);
  {
    GraphBuilder b(13);
    auto xi = b.input("x", DType::F32, symbolic());
    b.output(b.op("MaxPool", {xi},
                  attrs({{"kernel_shape", attr_ints({3})}, {"strides", attr_ints({2})}, {"pads", attr_ints({1, 1})}})));
    auto out = run(b.build(), "nan_maxpool", {x});
    const int64_t oc = (C + 2 - 3) / 2 + 1;
    std::vector<float> want;
    for (int64_t r = 0; r < A * B; ++r)
      for (int64_t o = 0; o < oc; ++o) {
        float m = -kInf;
        for (int64_t t = o * 2 - 1; t <= o * 2 + 1; ++t)
          if (t >= 0 && t < C) m = nan_max(m, xv[r * C + t]);
        want.push_back(m);
      }
    expect_same(out[0], want, "MaxPool");
  }
  {
    GraphBuilder b(13);
    auto xi = b.input("x", DType::F32, symbolic());
    b.output(b.op("GlobalMaxPool", {xi}));
    auto out = run(b.build(), "nan_global_maxpool", {x});
    std::vector<float> want;
    for (int64_t r = 0; r < A * B; ++r) {
      float m = -kInf;
      for (int64_t t = 0; t < C; ++t) m = nan_max(m, xv[r * C + t]);
      want.push_back(m);
    }
    expect_same(out[0], want, "GlobalMaxPool");
  }
}

}  // namespace
}  // namespace disco
