// `disco run` on a stateful model (issue #24 point 4): --carry feeds each
// run's state outputs back as the next run's inputs, --value gives a scalar
// input as text, and int64 ids come from .npy files. Outputs are checked with
// --expect against PyTorch's, whose state was carried the same way
// (tests/references/make_stateful_references.py).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/command.h"

namespace disco {
namespace {

using Result = testing::CommandResult;

const std::string kDir = std::string(DISCO_SOURCE_DIR) + "/tests/references/stateful/";

Result disco(const std::string &args) { return testing::run_command(std::string(DISCO_BINARY) + " " + args); }

std::string chunks(const std::string &option, const std::string &name, const std::string &stem) {
  std::string out;
  for (int k = 1; k <= 3; ++k) out += " --" + option + " " + name + "=" + kDir + stem + "." + std::to_string(k) + ".npy";
  return out;
}

const std::string kStream = "run " + kDir + "stream_lstm.onnx" + chunks("input", "ids", "ids") + " --input h=" + kDir +
                            "h0.npy --input c=" + kDir + "c0.npy --value temperature=0.7";

TEST(StatefulCli, CarriedLstmStateMatchesPyTorchInEveryChunk) {
  Result r = disco(kStream + " --carry h_out=h --carry c_out=c" + chunks("expect", "probs", "probs") +
                   chunks("expect", "h_out", "h_out") + chunks("expect", "c_out", "c_out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("run 3: ids[2,4]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("temperature[]"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
}

// Without --carry every chunk starts again from h0, c0: the later chunks'
// references (which continue the stream) must then be missed. This is what
// shows that the checks above can fail.
TEST(StatefulCli, WithoutCarryTheLaterChunksDiffer) {
  Result r = disco(kStream + chunks("expect", "h_out", "h_out"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("check h_out: ok"), std::string::npos) << "chunk 1 starts from h0 either way\n" << r.output;
  EXPECT_NE(r.output.find("check h_out: FAIL"), std::string::npos) << r.output;
}

TEST(StatefulCli, BadCarriesAndValuesAreNamedUsageErrors) {
  struct Case {
    std::string args, message;
  } cases[] = {
      {kStream + " --carry y=h", "model has no output named 'y'"},
      {kStream + " --carry h_out=q", "model has no input named 'q'"},
      {kStream + " --carry h_out=h --carry c_out=h", "input 'h' is carried twice"},
      {"run " + kDir + "stream_lstm.onnx" + chunks("input", "ids", "ids") + chunks("input", "h", "h_out") +
           " --input c=" + kDir + "c0.npy --value temperature=1 --carry h_out=h",
       "'h' is given 3 times; give it once"},
      {"run " + kDir + "stream_lstm.onnx --input ids=" + kDir + "ids.1.npy --input h=" + kDir + "h0.npy --input c=" +
           kDir + "c0.npy --value temperature=warm",
       "--value temperature: 'warm' is not a number (the input is float32)"},
      {"run " + kDir + "stream_lstm.onnx --value ids=3 --input h=" + kDir + "h0.npy --input c=" + kDir +
           "c0.npy --value temperature=1",
       "input 'ids' [batch, seq] is not a scalar"},
  };
  for (const Case &c : cases) {
    Result r = disco(c.args);
    EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 2) << c.args << "\n" << r.output;  // an error line, no crash
    EXPECT_NE(r.output.find("disco"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.find("run 1:"), std::string::npos) << "checked before any run\n" << r.output;
  }
}

}  // namespace
}  // namespace disco
