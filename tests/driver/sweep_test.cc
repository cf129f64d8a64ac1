// Every benchmark model, compiled once with symbolic dims and the default
// backends, matches PyTorch at every shape of the benchmark sweep (issue #5).
// The outputs are too large to store, so the references hold 4096 evenly
// spaced elements of each (tests/references/make_sweep_references.py), for an
// input given by a formula reproduced here.
#include <gtest/gtest.h>

#include <ostream>
#include <sstream>

#include "runtime/npy.h"
#include "driver/session.h"
#include "tests/support/jit_eval.h"
#include "tests/support/model_files.h"

namespace disco {
namespace {

struct SweepCase {
  std::string model;
  std::vector<std::vector<int64_t>> shapes;
};

// Names the case in ctest's listing (instead of its bytes).
void PrintTo(const SweepCase &c, std::ostream *os) { *os << c.model; }

const std::vector<SweepCase> kSweep = {
    {"mlp", {{1, 256}, {16, 256}, {256, 256}}},
    {"bert_layer", {{1, 32, 768}, {1, 128, 768}, {4, 128, 768}, {8, 384, 768}}},
    {"bert_small4", {{1, 64, 256}, {8, 128, 256}}},
    {"convnet", {{1, 3, 64, 64}, {8, 3, 128, 128}}},
    {"layernorm_softmax", {{1, 128, 768}, {16, 512, 768}}},
};
constexpr int64_t kSamples = 4096;

// Element i is ((i * 7919) % 2001) / 1000 - 1, in double, rounded to float32.
TensorData formula_input(const std::vector<int64_t> &shape) {
  TensorData t(DType::F32, shape);
  float *p = t.mutable_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<float>(static_cast<double>((i * 7919) % 2001) / 1000.0 - 1.0);
  return t;
}

TensorData samples_of(const TensorData &y) {
  const int64_t n = y.num_elements();
  TensorData s(DType::F32, {kSamples});
  for (int64_t j = 0; j < kSamples; ++j) s.mutable_as<float>()[j] = y.as<float>()[(j * (n - 1)) / (kSamples - 1)];
  return s;
}

std::string tag(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

class SweepTest : public ::testing::TestWithParam<SweepCase> {};

TEST_P(SweepTest, MatchesPyTorchAtEverySweepShapeWithOneCompile) {
  const SweepCase &c = GetParam();
  const std::string path = testing::find_model(c.model);
  if (path.empty()) GTEST_SKIP() << c.model << ".onnx is neither in ../shared/models nor in examples/models";
  Session session = Session::from_onnx(path, CompileOptions{});
  for (const auto &shape : c.shapes) {
    const TensorData want = read_npy(testing::references_dir() + "/sweep/" + c.model + "." + tag(shape) + ".npy");
    const TensorData got = samples_of(session.run({formula_input(shape)}).at(0));
    EXPECT_LE(testing::closeness(got, want, 1e-4, 1e-5), 1.0) << c.model << " at " << tag(shape);
  }
  EXPECT_TRUE(session.value_inputs().empty()) << "one dynamic compile serves the whole sweep";
}

INSTANTIATE_TEST_SUITE_P(Models, SweepTest, ::testing::ValuesIn(kSweep),
                         [](const auto &info) { return info.param.model; });

}  // namespace
}  // namespace disco
