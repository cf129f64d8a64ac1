// Value bounds (lowering/value_bounds.h) and the Softmax that uses them: a
// LayerNormalization's output is bounded, so its Softmax needs no row max;
// an unbounded or too large input keeps the max. Outputs are checked against
// a float64 reference.
#include "lowering/value_bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "driver/session.h"
#include "tests/support/jit_eval.h"
#include "tests/support/layernorm_softmax_reference.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

constexpr int64_t kChannels = 8;

// LayerNormalization (scale `gamma` for every channel, bias 0.5) -> Softmax.
Graph layernorm_softmax(float gamma) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("rows"), kChannels});
  auto ln = b.op("LayerNormalization", {x, b.constant("gamma", f32({kChannels}, std::vector<float>(kChannels, gamma))),
                                        b.constant("beta", f32({kChannels}, std::vector<float>(kChannels, 0.5f)))});
  b.output(b.op("Softmax", {ln}));
  return b.build();
}

std::vector<float> reference(const std::vector<float> &x, float gamma) {
  const std::vector<float> ones(kChannels, 1.0f), zeros(kChannels, 0.0f);
  return layernorm_affine_softmax_reference(x, kChannels, std::vector<float>(kChannels, gamma),
                                            std::vector<float>(kChannels, 0.5f), ones, zeros);
}

// Rows with one large outlier: the normalized values reach their bound.
std::vector<float> outlier_rows(int64_t rows) {
  std::vector<float> x(static_cast<size_t>(rows * kChannels));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.3f * static_cast<float>(i));
  for (int64_t r = 0; r < rows; ++r) x[static_cast<size_t>(r * kChannels + r % kChannels)] = 1000.0f * (r % 2 ? 1 : -1);
  return x;
}

std::vector<float> run(const Graph &g, const std::vector<float> &x) {
  CompileOptions opts;
  opts.use_cache = false;
  opts.backends = {"host"};
  Session s(g, "value_bounds", "", opts);
  const int64_t rows = static_cast<int64_t>(x.size()) / kChannels;
  auto out = s.run({f32({rows, kChannels}, x)});
  return std::vector<float>(out[0].as<float>(), out[0].as<float>() + out[0].num_elements());
}

TEST(ValueBounds, LayerNormOutputIsBoundedBySqrtNMinusOneTimesScalePlusBias) {
  Graph g = layernorm_softmax(3.0f);
  ShapeStore store;
  infer_shapes(g, store);
  auto b = abs_bound(g, g.nodes[0].outputs[0]);
  ASSERT_TRUE(b.has_value());
  EXPECT_NEAR(*b, std::sqrt(7.0) * 3 + 0.5, 1e-3);
  EXPECT_NEAR(*abs_bound(g, g.outputs[0]), 1.0, 1e-3) << "a Softmax's output";
  EXPECT_FALSE(abs_bound(g, g.inputs[0]).has_value()) << "a graph input is not bounded";
}

TEST(ValueBounds, SoftmaxOfBoundedAndOfTooLargeInputsMatchesTheReference) {
  // gamma 3: |input| <= 8.5, no max pass. gamma 40: up to 106, past exp()'s
  // range, so the row max must still be subtracted.
  for (float gamma : {3.0f, 40.0f}) {
    const auto x = outlier_rows(6);
    const auto y = run(layernorm_softmax(gamma), x);
    EXPECT_LE(closeness(f32({6, kChannels}, y), f32({6, kChannels}, reference(x, gamma))), 1.0) << "gamma " << gamma;
  }
}

TEST(ValueBounds, ANanInTheRowStaysNanWithoutTheMaxPass) {
  auto x = outlier_rows(2);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  const auto y = run(layernorm_softmax(3.0f), x);
  for (int64_t i = 0; i < kChannels; ++i) EXPECT_TRUE(std::isnan(y[static_cast<size_t>(i)])) << "element " << i;
  for (int64_t i = kChannels; i < 2 * kChannels; ++i) EXPECT_FALSE(std::isnan(y[static_cast<size_t>(i)]));
}

}  // namespace
}  // namespace disco
