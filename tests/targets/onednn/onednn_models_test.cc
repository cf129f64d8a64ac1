// Every benchmark model compiled once for `--targets onednn,host` matches
// PyTorch's outputs and the host-only outputs at its reference shape and at
// three other shapes, with its matmuls and convolutions run by oneDNN.
#include <gtest/gtest.h>

#include "runtime/npy.h"
#include "driver/session.h"
#include "tests/support/jit_eval.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"

namespace disco {
namespace {

class OnednnModelTest : public ::testing::TestWithParam<std::string> {};

using testing::expect_close;
using testing::reference_name;

int onednn_steps(const Plan &p) {
  int n = 0;
  for (const auto &s : p.steps) n += s.extern_call.rfind("onednn.", 0) == 0;
  return n;
}

TEST_P(OnednnModelTest, MatchesPyTorchAndTheHostAtFourShapesWithOneCompile) {
  const std::string name = GetParam();
  const std::string path = testing::find_model(name);
  if (path.empty()) GTEST_SKIP() << name << ".onnx is neither in ../shared/models nor in examples/models";
  CompileOptions with_onednn, host_only;
  with_onednn.backends = {"onednn", "host"};
  host_only.backends = {"host"};  // the default list has oneDNN first
  Session onednn = Session::from_onnx(path, with_onednn);
  Session host = Session::from_onnx(path, host_only);
  if (name != "layernorm_softmax") {
    EXPECT_GE(onednn_steps(onednn.last_compile().plan), 1) << name << " has matmuls or convolutions for oneDNN";
  }
  EXPECT_EQ(onednn_steps(host.last_compile().plan), 0);

  std::vector<std::string> bases;
  const std::string ref = reference_name(name);
  if (const std::string shared = testing::shared_models_dir(); !shared.empty()) bases.push_back(shared + "/" + ref);
  for (int k = 1; k <= 3; ++k) bases.push_back(testing::references_dir() + "/" + ref + "." + std::to_string(k));
  for (const auto &base : bases) {
    TensorData x = read_npy(base + ".input.npy");
    std::string shape;
    for (auto d : x.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    auto got = onednn.run({x});
    auto want_host = host.run({x});
    expect_close(got[0], read_npy(base + ".output.npy"), name + " at " + shape + " against PyTorch");
    expect_close(got[0], want_host[0], name + " at " + shape + " against the host backend");
  }
  EXPECT_LE(onednn.compiles(), 1) << "one compile must serve every shape";
}

INSTANTIATE_TEST_SUITE_P(Models, OnednnModelTest,
                         ::testing::ValuesIn(testing::benchmark_models()));

}  // namespace
}  // namespace disco
