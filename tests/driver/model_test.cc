// Every benchmark model, compiled once with symbolic dims, matches PyTorch's
// outputs at its reference shape and at three other shapes.
#include <gtest/gtest.h>

#include "runtime/executor.h"
#include "runtime/npy.h"
#include "driver/compile_model.h"
#include "tests/support/jit_eval.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"

namespace disco {
namespace {

class ModelTest : public ::testing::TestWithParam<std::string> {};

using testing::expect_close;
using testing::reference_name;

TEST_P(ModelTest, MatchesReferencesAtFourShapesWithOneCompile) {
  const std::string name = GetParam();
  const std::string path = testing::find_model(name);
  if (path.empty()) GTEST_SKIP() << name << ".onnx is neither in ../shared/models nor in examples/models";
  int before = compile_count();
  CompileOptions host_only;  // onednn_models_test covers the default onednn,host
  host_only.backends = {"host"};
  CompiledModel m = compile_onnx(path, host_only);
  Executor exec(m.plan, m.dir);
  const std::string ref = reference_name(name);
  if (const std::string shared = testing::shared_models_dir(); !shared.empty()) {
    auto out = exec.run({read_npy(shared + "/" + ref + ".input.npy")});
    expect_close(out[0], read_npy(shared + "/" + ref + ".output.npy"), name + " at the reference shape");
  }
  for (int k = 1; k <= 3; ++k) {
    const std::string base = testing::references_dir() + "/" + ref + "." + std::to_string(k);
    TensorData x = read_npy(base + ".input.npy");
    auto out = exec.run({x});
    expect_close(out[0], read_npy(base + ".output.npy"), name + " at shape set " + std::to_string(k));
  }
  EXPECT_LE(compile_count(), before + 1) << "one compile must serve every shape";
}

INSTANTIATE_TEST_SUITE_P(Models, ModelTest,
                         ::testing::ValuesIn(testing::benchmark_models()));

}  // namespace
}  // namespace disco
