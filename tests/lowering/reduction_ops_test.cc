#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// ---- naive reference -------------------------------------------------------

using Reducer = std::function<double(const std::vector<double> &)>;

// The row-major index, among the kept (not reduced) dims, of element `flat`.
int64_t group_of(int64_t flat, const std::vector<int64_t> &shape, const std::set<int> &axes) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  int64_t g = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!axes.count(static_cast<int>(i))) g = g * shape[i] + idx[i];
  return g;
}

// Reduces `axes` of a row-major tensor: every output element gets the list of
// the input values that fold into it.
TensorData reduce_ref(const std::vector<float> &x, const std::vector<int64_t> &shape, const std::set<int> &axes,
                      bool keepdims, const Reducer &fn) {
  std::vector<int64_t> out_shape, kept_shape;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool reduced = axes.count(static_cast<int>(i)) != 0;
    if (!reduced) kept_shape.push_back(shape[i]);
    if (!reduced || keepdims) out_shape.push_back(reduced ? 1 : shape[i]);
  }
  std::vector<std::vector<double>> groups(numel(kept_shape));
  for (int64_t flat = 0; flat < numel(shape); ++flat) groups[group_of(flat, shape, axes)].push_back(x[flat]);
  std::vector<float> out;
  for (const auto &g : groups) out.push_back(static_cast<float>(fn(g)));
  return f32(out_shape, out);
}

double sum_of(const std::vector<double> &v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double max_of(const std::vector<double> &v) { return *std::max_element(v.begin(), v.end()); }

// Softmax of the values that share the kept indices, laid back in place.
std::vector<float> softmax_ref(const std::vector<float> &x, const std::vector<int64_t> &shape,
                               const std::set<int> &axes, bool log) {
  std::vector<float> out(x.size());
  std::map<int64_t, std::vector<double>> groups;
  for (int64_t f = 0; f < static_cast<int64_t>(x.size()); ++f) groups[group_of(f, shape, axes)].push_back(x[f]);
  for (int64_t f = 0; f < static_cast<int64_t>(x.size()); ++f) {
    const auto &g = groups[group_of(f, shape, axes)];
    double m = max_of(g), s = 0;
    for (double v : g) s += std::exp(v - m);
    out[f] = static_cast<float>(log ? x[f] - m - std::log(s) : std::exp(x[f] - m) / s);
  }
  return out;
}

// ---- Softmax / LogSoftmax --------------------------------------------------

void run_softmax(const std::string &op, int opset, Attributes attrs, const std::vector<int64_t> &xs,
                 const std::set<int> &axes, float offset = 0) {
  GraphBuilder b(opset);
  Shape shape{sym("batch")};
  for (size_t i = 1; i < xs.size(); ++i) shape.push_back(i == 1 ? Dim(sym("seq")) : Dim(xs[i]));
  auto x = b.input("x", DType::F32, shape);
  b.output(b.op(op, {x}, attrs));
  auto xv = ramp(numel(xs), 0.5f);
  for (auto &v : xv) v += offset;
  auto out = testing::jit_eval(b.build(), {f32(xs, xv)});
  EXPECT_LE(testing::closeness(out[0], f32(xs, softmax_ref(xv, xs, axes, op == "LogSoftmax"))), 1.0);
}

TEST(Softmax, LastAxisIsStableForLargeInputs) { run_softmax("Softmax", 13, {}, {2, 3, 5}, {2}, 1000.0f); }
TEST(Softmax, Opset13NormalizesOnlyTheGivenAxis) {
  run_softmax("Softmax", 13, {{"axis", attr_int(1)}}, {2, 3, 4}, {1});
}
TEST(Softmax, Opset11CoercesToTwoDimsAtTheAxis) {
  run_softmax("Softmax", 11, {{"axis", attr_int(1)}}, {2, 3, 4}, {1, 2});
}
TEST(Softmax, Opset11DefaultAxisIsOne) { run_softmax("Softmax", 11, {}, {3, 2, 2}, {1, 2}); }
TEST(LogSoftmax, LastAxisIsStableForLargeInputs) { run_softmax("LogSoftmax", 13, {}, {2, 3, 5}, {2}, -500.0f); }
// Logits near 1e5 (a float's step there is 2^-7): (x - max) - log sum keeps
// the digits that x - (max + log sum) rounds away.
TEST(LogSoftmax, LogitsNearAHundredThousandKeepTheirDigits) {
  run_softmax("LogSoftmax", 13, {}, {2, 3, 5}, {2}, 100000.0f);
}
TEST(LogSoftmax, Opset1CoercesAtAxisZero) {
  run_softmax("LogSoftmax", 1, {{"axis", attr_int(0)}}, {2, 2, 3}, {0, 1, 2});
}

TEST(SoftmaxInference, AxisOutOfRangeNamesTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 4});
  b.output(b.op("Softmax", {x}, {{"axis", attr_int(2)}}));
  Graph g = b.build();
  ShapeStore store;
  expect_error_naming([&] { infer_shapes(g, store); }, "Softmax_0", "axis");
}

// ---- LayerNormalization ----------------------------------------------------

TEST(LayerNormalization, LastAxisWithScaleAndBias) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("b"), sym("s"), 8});
  std::vector<float> scale = ramp(8, 0.5f, 1), bias = ramp(8, 0.1f, 5);
  b.output(b.op("LayerNormalization", {x, b.constant("g", f32({8}, scale)), b.constant("bb", f32({8}, bias))},
                {{"epsilon", attr_float(1e-3f)}}));
  std::vector<int64_t> xs{2, 3, 8};
  auto xv = ramp(numel(xs), 0.7f, 2);
  auto out = testing::jit_eval(b.build(), {f32(xs, xv)});
  std::vector<float> ref(xv.size());
  for (int row = 0; row < 6; ++row) {
    double mean = 0, var = 0;
    for (int i = 0; i < 8; ++i) mean += xv[row * 8 + i] / 8.0;
    for (int i = 0; i < 8; ++i) var += (xv[row * 8 + i] - mean) * (xv[row * 8 + i] - mean) / 8.0;
    for (int i = 0; i < 8; ++i)
      ref[row * 8 + i] = static_cast<float>((xv[row * 8 + i] - mean) / std::sqrt(var + 1e-3) * scale[i] + bias[i]);
  }
  EXPECT_LE(testing::closeness(out[0], f32(xs, ref)), 1.0);
}

TEST(LayerNormalization, InnerBlockWithMeanAndInvStdDevOutputs) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("b"), 2, 3});
  std::vector<float> scale{1, 2, 3, 4, 5, 6};
  auto outs = b.op_n("LayerNormalization", {x, b.constant("g", f32({2, 3}, scale))}, 3,
                     {{"axis", attr_int(1)}, {"epsilon", attr_float(0.0f)}});
  for (const auto &o : outs) b.output(o);
  std::vector<float> xv{1, 2, 3, 4, 5, 6, 0, 0, 0, 2, 2, 8};
  auto out = testing::jit_eval(b.build(), {f32({2, 2, 3}, xv)});
  // Row 0: mean 3.5, var 35/12. Row 1: mean 2, var (4+4+4+0+0+36)/6 = 8.
  double inv0 = 1 / std::sqrt(35.0 / 12), inv1 = 1 / std::sqrt(8.0);
  std::vector<float> ref;
  for (int i = 0; i < 6; ++i) ref.push_back(static_cast<float>((xv[i] - 3.5) * inv0 * scale[i]));
  for (int i = 0; i < 6; ++i) ref.push_back(static_cast<float>((xv[6 + i] - 2.0) * inv1 * scale[i]));
  EXPECT_LE(testing::closeness(out[0], f32({2, 2, 3}, ref)), 1.0);
  ASSERT_EQ(out[1].shape, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_LE(testing::closeness(out[1], f32({2, 1, 1}, {3.5f, 2.0f})), 1.0);
  EXPECT_LE(testing::closeness(out[2], f32({2, 1, 1}, {static_cast<float>(inv0), static_cast<float>(inv1)})), 1.0);
}

TEST(LayerNormalizationInference, ScaleMismatchNamesTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("b"), 8});
  b.output(b.op("LayerNormalization", {x, b.constant("g", f32({4}, {1, 1, 1, 1}))}));
  Graph g = b.build();
  ShapeStore store;
  expect_error_naming([&] { infer_shapes(g, store); }, "LayerNormalization_0", "Scale");
}

// ---- Reduce* ---------------------------------------------------------------

struct ReduceCase {
  std::string op;
  Reducer ref;
};

std::vector<ReduceCase> reduce_cases() {
  return {
      {"ReduceSum", sum_of},
      {"ReduceMean", [](const std::vector<double> &v) { return sum_of(v) / v.size(); }},
      {"ReduceMax", max_of},
      {"ReduceMin", [](const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); }},
      {"ReduceProd",
       [](const std::vector<double> &v) {
         double p = 1;
         for (double x : v) p *= x;
         return p;
       }},
      {"ReduceL1",
       [](const std::vector<double> &v) {
         double s = 0;
         for (double x : v) s += std::fabs(x);
         return s;
       }},
      {"ReduceL2",
       [](const std::vector<double> &v) {
         double s = 0;
         for (double x : v) s += x * x;
         return std::sqrt(s);
       }},
      {"ReduceSumSquare",
       [](const std::vector<double> &v) {
         double s = 0;
         for (double x : v) s += x * x;
         return s;
       }},
      {"ReduceLogSum", [](const std::vector<double> &v) { return std::log(sum_of(v)); }},
      {"ReduceLogSumExp",
       [](const std::vector<double> &v) {
         double m = max_of(v), s = 0;
         for (double x : v) s += std::exp(x - m);
         return m + std::log(s);
       }},
  };
}

// Runs `op` on [batch, seq, 4] with axes given as an input (`as_input`) or
// the attribute, against the naive reference.
void run_reduce(const ReduceCase &rc, int opset, bool as_input, std::vector<int64_t> axes, bool keepdims,
                std::vector<float> xv = {}) {
  std::vector<int64_t> xs{2, 3, 4};
  if (xv.empty()) xv = ramp(numel(xs), 0.25f, 1);
  GraphBuilder b(opset);
  auto x = b.input("x", DType::F32, {sym("batch"), sym("seq"), 4});
  std::vector<std::string> ins{x};
  Attributes at{{"keepdims", attr_int(keepdims)}};
  if (as_input)
    ins.push_back(b.constant("axes", TensorData::from_int64(axes, {static_cast<int64_t>(axes.size())})));
  else if (!axes.empty())
    at["axes"] = attr_ints(axes);
  b.output(b.op(rc.op, ins, at));
  auto out = testing::jit_eval(b.build(), {f32(xs, xv)});
  std::set<int> ax;
  for (auto a : axes) ax.insert(static_cast<int>(a < 0 ? a + 3 : a));
  if (axes.empty()) ax = {0, 1, 2};
  TensorData ref = reduce_ref(xv, xs, ax, keepdims, rc.ref);
  ASSERT_EQ(out[0].shape, ref.shape) << rc.op;
  EXPECT_LE(testing::closeness(out[0], ref), 1.0) << rc.op;
}

TEST(Reduce, EveryOpOverTheMiddleAxisWithAttrAxes) {
  // Positive values so that ReduceLogSum is defined; small so that ReduceProd stays exact enough.
  std::vector<float> xv = ramp(24, 0.1f, 3);
  for (auto &v : xv) v = 1.0f + v;
  for (const auto &rc : reduce_cases()) run_reduce(rc, 11, false, {1}, true, xv);
}

TEST(Reduce, EveryOpOverTwoAxesWithInputAxesAtOpset18) {
  std::vector<float> xv = ramp(24, 0.1f, 5);
  for (auto &v : xv) v = 1.0f + v;
  for (const auto &rc : reduce_cases()) run_reduce(rc, 18, true, {0, -1}, false, xv);
}

TEST(Reduce, SumTakesAxesAsAnInputFromOpset13) {
  run_reduce(reduce_cases()[0], 13, true, {-1}, false);
  run_reduce(reduce_cases()[0], 13, true, {1, 2}, true);
}

TEST(Reduce, NoAxesReducesEverything) {
  run_reduce(reduce_cases()[1], 13, false, {}, false);  // ReduceMean to a scalar
  run_reduce(reduce_cases()[2], 13, false, {}, true);   // ReduceMax to [1, 1, 1]
}

TEST(Reduce, LogSumExpIsStableForLargeInputs) {
  std::vector<float> xv = ramp(24, 1.0f);
  for (auto &v : xv) v += 2000.0f;
  run_reduce(reduce_cases()[9], 13, false, {2}, true, xv);
}

// Rows whose max is not finite: their log-sum-exp is that max (PyTorch's
// logsumexp), not inf - inf = NaN; a NaN stays NaN.
TEST(Reduce, LogSumExpOfRowsWithInfinitiesIsTheirMax) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {sym("rows"), 3});
  b.output(b.op("ReduceLogSumExp", {x}, attrs({{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}})));
  auto out = testing::jit_eval(b.build(), {f32({4, 3}, {-inf, -inf, -inf, inf, 0, 1, 0, 1, 2, nan, 0, 1})});
  const float *y = out[0].as<float>();
  EXPECT_EQ(y[0], -inf);
  EXPECT_EQ(y[1], inf);
  EXPECT_NEAR(y[2], 2.40760596, 1e-6);  // log(1 + e + e^2)
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(Reduce, NoopWithEmptyAxesIsTheIdentity) {
  GraphBuilder b(18);
  auto x = b.input("x", DType::F32, {sym("n"), 3});
  b.output(b.op("ReduceMax", {x}, {{"noop_with_empty_axes", attr_int(1)}}));
  auto xv = ramp(6);
  auto out = testing::jit_eval(b.build(), {f32({2, 3}, xv)});
  EXPECT_LE(testing::closeness(out[0], f32({2, 3}, xv)), 1.0);
}

TEST(ReduceInference, KeepdimsShapesAreSymbolic) {
  GraphBuilder b(13);
  auto x = b.input("x", DType::F32, {sym("b"), sym("s"), 768});
  b.output(b.op("ReduceMean", {x}, {{"axes", attr_ints({-1})}}));
  b.output(b.op("ReduceSum", {x, b.constant("ax", TensorData::from_int64({1}, {1}))}, {{"keepdims", attr_int(0)}}));
  Graph g = b.build();
  ShapeStore store;
  infer_shapes(g, store);
  EXPECT_EQ(*g.value(g.outputs[0]).shape, (Shape{sym("b"), sym("s"), 1}));
  EXPECT_EQ(*g.value(g.outputs[1]).shape, (Shape{sym("b"), 768}));
}

TEST(ReduceInference, BadAxesNameTheNode) {
  {
    GraphBuilder b(13);
    auto x = b.input("x", DType::F32, {sym("b"), 4});
    b.output(b.op("ReduceMax", {x}, {{"axes", attr_ints({1, -1})}}));
    Graph g = b.build();
    ShapeStore store;
    expect_error_naming([&] { infer_shapes(g, store); }, "ReduceMax_0", "twice");
  }
  {
    GraphBuilder b(13);
    auto x = b.input("x", DType::F32, {sym("b"), 4});
    b.output(b.op("ReduceMin", {x}, {{"axes", attr_ints({2})}}));
    Graph g = b.build();
    ShapeStore store;
    expect_error_naming([&] { infer_shapes(g, store); }, "ReduceMin_0", "out of range");
  }
  {
    GraphBuilder b(13);
    auto x = b.input("x", DType::F32, {sym("b"), 4});
    auto axes = b.input("axes", DType::I64, {1});
    b.output(b.op("ReduceSum", {x, axes}));
    Graph g = b.build();
    ShapeStore store;
    expect_error_naming([&] { infer_shapes(g, store); }, "ReduceSum_0", "compile time");
  }
}

// ---- ArgMax / ArgMin -------------------------------------------------------

TensorData run_arg(const std::string &op, Attributes attrs, const std::vector<int64_t> &xs,
                   const std::vector<float> &xv) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), xs[1], sym("w")});
  b.output(b.op(op, {x}, attrs));
  return testing::jit_eval(b.build(), {f32(xs, xv)})[0];
}

std::vector<int64_t> ints(const TensorData &t) { return t.to_int64(); }

TEST(ArgMax, FirstAndLastIndexOfTiesAlongTheMiddleAxis) {
  // [1, 3, 2]: column 0 is (5, 5, 1), column 1 is (0, 7, 7).
  std::vector<float> xv{5, 0, 5, 7, 1, 7};
  auto first = run_arg("ArgMax", {{"axis", attr_int(1)}}, {1, 3, 2}, xv);
  EXPECT_EQ(first.dtype, DType::I64);
  EXPECT_EQ(first.shape, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(ints(first), (std::vector<int64_t>{0, 1}));
  auto last = run_arg("ArgMax", {{"axis", attr_int(1)}, {"select_last_index", attr_int(1)}, {"keepdims", attr_int(0)}},
                      {1, 3, 2}, xv);
  EXPECT_EQ(last.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ints(last), (std::vector<int64_t>{1, 2}));
}

TEST(ArgMin, LastAxisWithNegativeAxisAndInfinities) {
  const float inf = INFINITY;
  // [2, 1, 4]
  std::vector<float> xv{3, -inf, 2, -inf, inf, inf, inf, inf};
  auto first = run_arg("ArgMin", {{"axis", attr_int(-1)}}, {2, 1, 4}, xv);
  EXPECT_EQ(ints(first), (std::vector<int64_t>{1, 0}));
  auto last = run_arg("ArgMin", {{"axis", attr_int(-1)}, {"select_last_index", attr_int(1)}}, {2, 1, 4}, xv);
  EXPECT_EQ(ints(last), (std::vector<int64_t>{3, 3}));
}

TEST(ArgMax, ANanWinsForArgMaxAndArgMinAsInPyTorch) {
  // [4, 1, 4]; torch.argmax and torch.argmin of these rows both give
  // [0, 2, 0, 1] (the first NaN; a NaN-free row as usual).
  const float nan = NAN;
  std::vector<float> xv{nan, 1, 2, nan, 1, 3, nan, 0, 5, 5, 5, 5, -1, nan, nan, -2};
  for (const char *op : {"ArgMax", "ArgMin"}) {
    EXPECT_EQ(ints(run_arg(op, {{"axis", attr_int(2)}}, {4, 1, 4}, xv)), (std::vector<int64_t>{0, 2, 0, 1})) << op;
    // The last NaN with select_last_index; row 2's ties give its last index.
    EXPECT_EQ(ints(run_arg(op, {{"axis", attr_int(2)}, {"select_last_index", attr_int(1)}}, {4, 1, 4}, xv)),
              (std::vector<int64_t>{3, 2, 3, 2}))
        << op;
  }
}

}  // namespace
}  // namespace disco
