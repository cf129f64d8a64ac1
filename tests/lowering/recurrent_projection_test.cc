// RNN/GRU/LSTM input projections split out as a MatMul and an Add
// (lowering/recurrent_projection.h): the new constants hold W^T with the
// directions side by side and Wb + Rb (without GRU's Rb of gate h under
// linear_before_reset), and a split bidirectional GRU of either reset form
// gives the numbers of a double-precision GRU written from the ONNX spec.
#include "lowering/recurrent_projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "frontend/graph_builder.h"
#include "tests/support/gru_reference.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

constexpr int64_t T = 3, B = 2, I = 3, H = 2, D = 2, G = 3;

struct Weights {
  std::vector<float> w = sine_wave(D * G * H * I, 0.7f, 0.1f), r = sine_wave(D * G * H * H, 1.3f, 0.2f),
                     b = sine_wave(D * 2 * G * H, 0.9f, 0.3f);
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
  const std::vector<float> x = sine_wave(T * B * I, 0.37f, 0.5f);
  for (bool lbr : {false, true}) {
    Graph g = gru(wt, lbr);
    ASSERT_EQ(split_recurrent_projections(g), 1);
    auto out = jit_eval(std::move(g), {f32({T, B, I}, x)});
    const std::vector<double> want = reference_gru({T, B, I, H, D}, x, wt.w, wt.r, wt.b, lbr);
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
  auto r = g.constant("R", f32({1, G * H, H}, sine_wave(G * H * H, 1.3f, 0.2f)));
  g.output(g.op("GRU", {x, w, r}, {{"hidden_size", attr_int(H)}}));
  Graph graph = g.build();
  EXPECT_EQ(split_recurrent_projections(graph), 0) << "W is a graph input";
}

// Two GRUs reading one W and one B (a shared-weights encoder run over two
// inputs) get one W^T and one bias constant between them, as the recurrence's
// own layouts are made once per weight (transpose_recurrent_weights); a third
// of the other reset form gets its own bias (Rb of gate h left out).
TEST(RecurrentProjection, NodesReadingOneWeightShareItsProjectionConstants) {
  const Weights wt;
  GraphBuilder gb;
  auto w = gb.constant("W", f32({D, G * H, I}, wt.w));
  auto r = gb.constant("R", f32({D, G * H, H}, wt.r));
  auto b = gb.constant("B", f32({D, 2 * G * H}, wt.b));
  int inputs = 0;
  for (int lbr : {0, 0, 1}) {
    auto x = gb.input("x" + std::to_string(inputs++), DType::F32, {sym("seq"), sym("batch"), I});
    gb.output(gb.op("GRU", {x, w, r, b},
                    {{"hidden_size", attr_int(H)},
                     {"direction", attr_string("bidirectional")},
                     {"linear_before_reset", attr_int(lbr)}}));
  }
  Graph g = gb.build();
  ASSERT_EQ(split_recurrent_projections(g), 3);
  std::vector<int> weights, biases;
  for (const Node &n : g.nodes) {
    if (n.op_type == "MatMul") weights.push_back(n.inputs[1]);
    if (n.op_type == "Add") biases.push_back(n.inputs[1]);
  }
  ASSERT_EQ(weights.size(), 3u);
  ASSERT_EQ(biases.size(), 3u);
  EXPECT_EQ(std::set<int>(weights.begin(), weights.end()).size(), 1u) << "one W^T for the three nodes";
  EXPECT_EQ(std::set<int>(biases.begin(), biases.end()).size(), 2u) << "a bias for each reset form";
}

}  // namespace
}  // namespace disco
