// Stateful models through the C++ API (issue #24 point 4): a Session's
// outputs fed back as the next run's inputs, the way a streaming caller keeps
// an RNN's state, with int64 and scalar inputs beside it. References are
// PyTorch's, with the state carried the same way
// (tests/references/make_stateful_references.py).
#include <gtest/gtest.h>

#include <cmath>

#include "driver/session.h"
#include "runtime/npy.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

const std::string kDir = std::string(DISCO_SOURCE_DIR) + "/tests/references/stateful/";

TensorData reference(const std::string &file) { return read_npy(kDir + file); }

void expect_close(const TensorData &got, const TensorData &want, const std::string &what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  const std::vector<double> g = testing::floats(got), w = testing::floats(want);
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], 1e-5 + 1e-4 * std::fabs(w[i])) << what << " element " << i;
}

// ids (int64), h, c, temperature (a scalar) -> probs, h_out, c_out; three
// chunks of different lengths, each run's h_out and c_out fed back.
TEST(StatefulSession, LstmStateCarriedAcrossChunksMatchesPyTorch) {
  Session session = Session::from_onnx(kDir + "stream_lstm.onnx", CompileOptions{});
  ASSERT_EQ(session.inputs().size(), 4u);
  EXPECT_EQ(session.inputs()[0].dtype, DType::I64);
  EXPECT_TRUE(session.inputs()[3].shape.empty()) << "temperature is a scalar";
  std::vector<TensorData> in = {reference("ids.1.npy"), reference("h0.npy"), reference("c0.npy"), TensorData::scalar_f32(0.7f)};
  std::vector<TensorData> out;
  const int compiles = session.compiles();  // 1, or 0 when the compile cache served the model
  for (int k = 1; k <= 3; ++k) {
    const std::string chunk = std::to_string(k);
    in[0] = reference("ids." + chunk + ".npy");
    session.run(in, out);
    expect_close(out[0], reference("probs." + chunk + ".npy"), "chunk " + chunk + " probs");
    expect_close(out[1], reference("h_out." + chunk + ".npy"), "chunk " + chunk + " h_out");
    expect_close(out[2], reference("c_out." + chunk + ".npy"), "chunk " + chunk + " c_out");
    in[1] = out[1];  // the state, shared with the outputs (no copy)
    in[2] = out[2];
  }
  EXPECT_EQ(session.compiles(), compiles) << "no compile per chunk length";
}

// s_out = s^T * 0.5 + x. The input s shares its storage with the output that
// the next run(in, out) reuses: the session must not write s_out over s
// while it still reads s.
TEST(StatefulSession, StateSharingStorageWithTheReusedOutputIsReadWhole) {
  Session session = Session::from_onnx(kDir + "flip_state.onnx", CompileOptions{});
  std::vector<TensorData> in = {reference("flip_s0.npy"), reference("flip_x.1.npy")};
  std::vector<TensorData> out;
  for (int k = 1; k <= 3; ++k) {
    const std::string step = std::to_string(k);
    in[1] = reference("flip_x." + step + ".npy");
    session.run(in, out);
    expect_close(out[0], reference("flip_s_out." + step + ".npy"), "step " + step);
    in[0] = out[0];
  }
}

}  // namespace
}  // namespace disco
