// The disco CLI as a user meets it: help on every verb, symbolic shapes in
// inspect, and one clear error line with a non-zero exit for bad models and
// bad inputs, never a crash, and no output written.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "frontend/tensor_data.h"
#include "onnx/onnx_pb.h"
#include "runtime/npy.h"
#include "tests/support/command.h"
#include "tests/support/model_files.h"
#include "tests/support/onnx_protos.h"

namespace disco {
namespace {

using Result = testing::CommandResult;

Result disco(const std::string &args) { return testing::run_command(std::string(DISCO_BINARY) + " " + args); }

std::string temp_dir() { return testing::make_temp_dir("cli-test"); }

bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

void expect_one_line_error(const Result &r, const std::string &must_contain) {
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("disco: error:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(must_contain), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Aborted"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

TEST(Cli, EveryVerbHasHelp) {
  for (const char *verb : {"", "run ", "inspect "}) {
    Result r = disco(std::string(verb) + "--help");
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_NE(r.output.find("usage: disco"), std::string::npos) << r.output;
  }
}

TEST(Cli, UnknownOptionIsAUsageError) {
  Result r = disco("run --frobnicate x.onnx");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--frobnicate"), std::string::npos) << r.output;
}

TEST(Cli, InspectShowsBertLayerOutputInSymbolNames) {
  std::string model = testing::find_model("bert_layer");
  if (model.empty()) GTEST_SKIP() << "bert_layer.onnx needs ../shared/models";
  Result r = disco("inspect " + model);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string outputs = r.output.substr(r.output.find("outputs:"));
  outputs = outputs.substr(0, outputs.find("values:"));
  EXPECT_NE(outputs.find("[batch, seq, 768]"), std::string::npos) << outputs;
}

TEST(Cli, RunWritesOutputsAndChecksThem) {
  std::string model = testing::find_model("layernorm_softmax");
  ASSERT_FALSE(model.empty());
  std::string ref = testing::references_dir() + "/layernorm_softmax.2";
  std::string dir = temp_dir();
  Result r = disco("run " + model + " --input x=" + ref + ".input.npy --expect y=" + ref +
                   ".output.npy --output-dir " + dir + " --repeat 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("median"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("compile:"), std::string::npos) << r.output;
  TensorData y = read_npy(dir + "/y.npy");
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 7, 768}));
}

TEST(Cli, WrongLastDimNamesTheInputAndDimAndWritesNothing) {
  std::string model = testing::find_model("bert_layer");
  if (model.empty()) model = testing::find_model("layernorm_softmax");
  std::string dir = temp_dir();
  Result r = disco("run " + model + " --shape x=2x5x767 --output-dir " + dir + "/out");
  expect_one_line_error(r, "input 'x' dim 2 is 767, expected 768");
  EXPECT_FALSE(exists(dir + "/out"));
}

TEST(Cli, Int32InputWhereFloatIsExpectedIsRejected) {
  std::string model = testing::find_model("layernorm_softmax");
  std::string dir = temp_dir();
  TensorData x(DType::I32, {1, 2, 768});
  write_npy(dir + "/x.npy", x);
  Result r = disco("run " + model + " --input x=" + dir + "/x.npy --output-dir " + dir + "/out");
  expect_one_line_error(r, "input 'x' has dtype int32, expected float32");
  EXPECT_FALSE(exists(dir + "/out"));
}

TEST(Cli, TruncatedModelGivesAClearError) {
  std::string model = testing::find_model("convnet");
  std::ifstream f(model, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string bytes = ss.str();
  std::string dir = temp_dir();
  std::ofstream(dir + "/cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  Result r = disco("run " + dir + "/cut.onnx --shape x=1x3x8x8");
  expect_one_line_error(r, "not a valid ONNX model");
}

TEST(Cli, UnknownOpNamesTheNodeAndOp) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  testing::add_input(g, "x", {"n"});
  testing::add_node(g, "FrobnicateOp", {"x"}, {"y"}, "frob_1");
  g->add_output()->set_name("y");
  std::string dir = temp_dir();
  std::ofstream(dir + "/m.onnx", std::ios::binary) << m.SerializeAsString();
  Result r = disco("run " + dir + "/m.onnx --shape x=4");
  expect_one_line_error(r, "node 'frob_1' (FrobnicateOp): unknown op 'FrobnicateOp'");
}

TEST(Cli, MissingModelFileGivesAClearError) {
  expect_one_line_error(disco("inspect /nonexistent/model.onnx"), "cannot open '/nonexistent/model.onnx'");
}

}  // namespace
}  // namespace disco
