// Issue #26's warm start: a model file whose compile the cache holds, and
// which has not changed since, is neither read nor parsed again
// (driver/source_index.h); a changed file is. Outputs against PyTorch's
// references (tests/references), so a stale plan served for a changed file fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "driver/session.h"
#include "runtime/npy.h"
#include "tests/support/jit_eval.h"
#include "tests/support/model_files.h"

namespace disco {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("disco-warm-" + std::to_string(::getpid()) + "-" +
                                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void expect_reference(Session &s, const std::string &model) {
  const std::string refs = testing::references_dir() + "/" + model + ".1.";
  const TensorData got = s.run({read_npy(refs + "input.npy")}).at(0);
  EXPECT_LE(testing::closeness(got, read_npy(refs + "output.npy")), 1.0) << model;
}

TEST(WarmStart, AnUnchangedFileIsNotParsedAndAChangedOneIs) {
  const std::string first = testing::find_model("layernorm_softmax"), second = testing::find_model("convnet");
  ASSERT_FALSE(first.empty() || second.empty());
  TempDir tmp;
  const std::string model = (tmp.path / "m.onnx").string();
  fs::copy_file(first, model);
  CompileOptions o;
  o.backends = {"host"};
  o.cache_dir = (tmp.path / "cache").string();

  Session cold = Session::from_onnx(model, o);
  EXPECT_TRUE(cold.parsed());
  EXPECT_FALSE(cold.last_compile().cache_hit);
  expect_reference(cold, "layernorm_softmax");

  Session warm = Session::from_onnx(model, o);
  EXPECT_FALSE(warm.parsed()) << "the cache knew the file and held its compile";
  EXPECT_TRUE(warm.last_compile().cache_hit);
  EXPECT_EQ(warm.compiles(), 0);
  ASSERT_EQ(warm.inputs().size(), cold.inputs().size());
  EXPECT_EQ(warm.inputs()[0].name, cold.inputs()[0].name);
  EXPECT_EQ(warm.inputs()[0].shape, cold.inputs()[0].shape);
  EXPECT_EQ(warm.output_names(), cold.output_names());
  expect_reference(warm, "layernorm_softmax");

  // Another model under the same path: parsed and compiled, never the old plan.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  fs::copy_file(second, model, fs::copy_options::overwrite_existing);
  Session changed = Session::from_onnx(model, o);
  EXPECT_TRUE(changed.parsed());
  expect_reference(changed, "convnet");

  // Without the cache, always parsed.
  o.use_cache = false;
  EXPECT_TRUE(Session::from_onnx(model, o).parsed());
}

}  // namespace
}  // namespace disco
