// RNN/GRU/LSTM input projections split out as a MatMul and an Add
// (lowering/recurrent_projection.h): the new constants hold W^T with the
// directions side by side and Wb + Rb (without GRU's Rb of gate h under
// linear_before_reset), and a split bidirectional GRU of either reset form
// gives the numbers of a double-precision GRU written from the ONNX spec.
#include "lowering/recurrent_projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

constexpr int64_t T = 3, B = 2, I = 3, H = 2, D = 2, G = 3;

std::vector<float> ramp(int64_t n, float scale, float shift) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(scale * static_cast<float>(i) + shift);
  return v;
}

struct Weights {
  std::vector<float> w = ramp(D * G * H * I, 0.7f, 0.1f), r = ramp(D * G * H * H, 1.3f, 0.2f),
                     b = ramp(D * 2 * G * H, 0.9f, 0.3f);
};

// A bidirectional GRU over x [T, B, I] with constant W, R and B.
Graph gru(const Weights &wt, bool linear_before_reset) {
  GraphBuilder g;
  auto x = g.input("x", DType::F32, {sym("seq"), sym("batch"), I});
  auto w = g.constant("W", f32({D, G * H, I}, wt.w));
  auto r = g.constant("R", f32({D, G * H, H}, wt.r));
  auto b = g.constant("B", f32({D, 2 * G * H}, wt.b));
  g.output(g.op("GRU", {x, w, r, b},
                {{"hidden_size", attr_int(H)},
                 {"direction", attr_string("bidirectional")},
                 {"linear_before_reset", attr_int(linear_before_reset ? 1 : 0)}}));
  return g.build();
}

// ONNX's GRU (gates z, r, h; f = Sigmoid, g = Tanh) in double: Y [T, D, B, H].
std::vector<double> reference_gru(const Weights &wt, const std::vector<float> &x, bool lbr) {
  std::vector<double> y(static_cast<size_t>(T * D * B * H));
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(H, 0.0);
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? s : T - 1 - s;
        // x·W^T + Wb and h·R^T + Rb per gate row.
        auto xw = [&](int64_t row) {
          double v = wt.b[static_cast<size_t>(d * 2 * G * H + row)];
          for (int64_t i = 0; i < I; ++i)
            v += x[static_cast<size_t>((t * B + b) * I + i)] * wt.w[static_cast<size_t>((d * G * H + row) * I + i)];
          return v;
        };
        auto hr = [&](int64_t row, const std::vector<double> &src) {
          double v = wt.b[static_cast<size_t>(d * 2 * G * H + G * H + row)];
          for (int64_t k = 0; k < H; ++k) v += src[k] * wt.r[static_cast<size_t>((d * G * H + row) * H + k)];
          return v;
        };
        std::vector<double> z(H), r(H), rh(H), next(H);
        for (int64_t j = 0; j < H; ++j) {
          z[j] = sigmoid(xw(j) + hr(j, h));
          r[j] = sigmoid(xw(H + j) + hr(H + j, h));
          rh[j] = r[j] * h[j];
        }
        for (int64_t j = 0; j < H; ++j) {
          const double n =
              lbr ? std::tanh(xw(2 * H + j) + r[j] * hr(2 * H + j, h)) : std::tanh(xw(2 * H + j) + hr(2 * H + j, rh));
          next[j] = (1 - z[j]) * n + z[j] * h[j];
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) y[static_cast<size_t>(((t * D + d) * B + b) * H + j)] = h[j];
      }
    }
  return y;
}

TEST(RecurrentProjection, SplitsTheProjectionIntoAMatMulOfWTransposedAndAnAddOfTheBiases) {
  const Weights wt;
  for (bool lbr : {false, true}) {
    Graph g = gru(wt, lbr);
    ASSERT_EQ(split_recurrent_projections(g), 1);
    const Node &node = g.nodes.back();
    ASSERT_EQ(node.op_type, "GRU");
    EXPECT_TRUE(has_projected_recurrent_input(AttrReader(node.attrs, node.where())));
    EXPECT_EQ(node.inputs[1], -1) << "W is read by the MatMul only";
    const Node &add = g.nodes[static_cast<size_t>(g.value(node.inputs[0]).producer)];
    ASSERT_EQ(add.op_type, "Add");
    const Node &matmul = g.nodes[static_cast<size_t>(g.value(add.inputs[0]).producer)];
    ASSERT_EQ(matmul.op_type, "MatMul");
    EXPECT_EQ(*g.value(node.inputs[0]).shape, (Shape{sym("seq"), sym("batch"), Dim(D * G * H)}));
    const TensorData &wt_t = *g.value(matmul.inputs[1]).constant;
    ASSERT_EQ(wt_t.shape, (std::vector<int64_t>{I, D * G * H}));
    for (int64_t i = 0; i < I; ++i)
      for (int64_t c = 0; c < D * G * H; ++c)
        EXPECT_EQ(wt_t.as<float>()[i * D * G * H + c], wt.w[static_cast<size_t>(c * I + i)]) << i << ", " << c;
    const TensorData &bias = *g.value(add.inputs[1]).constant;
    ASSERT_EQ(bias.shape, (std::vector<int64_t>{D * G * H}));
    for (int64_t d = 0; d < D; ++d)
      for (int64_t row = 0; row < G * H; ++row) {
        const float wb = wt.b[static_cast<size_t>(d * 2 * G * H + row)];
        const float rb = wt.b[static_cast<size_t>(d * 2 * G * H + G * H + row)];
        const float want = lbr && row >= 2 * H ? wb : wb + rb;
        EXPECT_EQ(bias.as<float>()[d * G * H + row], want) << "lbr " << lbr << ", direction " << d << ", row " << row;
      }
    EXPECT_EQ(split_recurrent_projections(g), 0) << "a node is split once";
  }
}

TEST(RecurrentProjection, ASplitBidirectionalGruMatchesTheOnnxFormulaInDouble) {
  const Weights wt;
  const std::vector<float> x = ramp(T * B * I, 0.37f, 0.5f);
  for (bool lbr : {false, true}) {
    Graph g = gru(wt, lbr);
    ASSERT_EQ(split_recurrent_projections(g), 1);
    auto out = jit_eval(std::move(g), {f32({T, B, I}, x)});
    const std::vector<double> want = reference_gru(wt, x, lbr);
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{T, D, B, H}));
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(out[0].as<float>()[i], want[i], 1e-5 + 1e-4 * std::abs(want[i]))
          << "lbr " << lbr << ", element " << i;
  }
}

TEST(RecurrentProjection, LeavesNodesWithoutConstantWeightsAlone) {
  GraphBuilder g;
  auto x = g.input("x", DType::F32, {sym("seq"), sym("batch"), I});
  auto w = g.input("W", DType::F32, {1, G * H, I});
  auto r = g.constant("R", f32({1, G * H, H}, ramp(G * H * H, 1.3f, 0.2f)));
  g.output(g.op("GRU", {x, w, r}, {{"hidden_size", attr_int(H)}}));
  Graph graph = g.build();
  EXPECT_EQ(split_recurrent_projections(graph), 0) << "W is a graph input";
}

}  // namespace
}  // namespace disco
