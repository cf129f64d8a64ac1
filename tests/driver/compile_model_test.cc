// The compile driver and runtime end to end: one compile, several shapes.
#include "driver/compile_model.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "frontend/errors.h"
#include "driver/compile_cache.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::iota_f32;  // start, start + 1, ...

Graph relu_add_graph() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), Dim::symbol("m")});
  auto bias = b.constant("bias", iota_f32({3}, -2));  // -2, -1, 0
  auto s = b.op("Add", {x, bias});
  auto r = b.op("Relu", {s});
  b.output(b.op("Mul", {r, r}));
  return b.build();
}

CompileOptions no_cache() {
  CompileOptions o;
  o.use_cache = false;
  return o;
}

TEST(CompileModel, OneCompileServesSeveralShapes) {
  int before = compile_count();
  CompiledModel m = compile_graph(relu_add_graph(), "relu_add", "", no_cache());
  EXPECT_EQ(compile_count(), before + 1);
  Executor exec(m.plan, m.dir);
  for (int64_t rows : {1, 2, 7}) {
    TensorData x = iota_f32({rows, 3}, -1);
    auto out = exec.run({x});
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{rows, 3}));
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      float v = x.as<float>()[i] + static_cast<float>(i % 3) - 2;
      float want = v > 0 ? v * v : 0;
      EXPECT_FLOAT_EQ(out[0].as<float>()[i], want) << "rows " << rows << " element " << i;
    }
  }
  EXPECT_EQ(compile_count(), before + 1);
}

TEST(CompileModel, TheProfileTimesEachPhaseAndCountsTheKernels) {
  // relu_add_graph is one fused Halide kernel; a cache hit compiles nothing.
  CompiledModel m = compile_graph(relu_add_graph(), "relu_add", "", no_cache());
  const CompileProfile &p = m.profile;
  size_t kernels = 0;
  for (const PlanStep &st : m.plan.steps) kernels += !st.kernel.empty();
  ASSERT_GT(kernels, 0u);
  EXPECT_EQ(p.kernels, static_cast<int>(kernels));
  EXPECT_EQ(p.unique_kernels, 1);
  EXPECT_GE(p.compile_workers, 1);
  EXPECT_GT(p.kernel_compile_s, 0);
  EXPECT_GT(p.halide_s, 0);
  EXPECT_GT(p.codegen_s, 0);
  EXPECT_GT(p.link_s, 0);
  EXPECT_GE(p.partition_s, 0);
  // halide_s and codegen_s are summed over kernels compiled in parallel: kernel_compile_s is their wall time.
  const double phases = p.shapes_s + p.partition_s + p.lower_s + p.kernel_compile_s + p.runtime_s + p.link_s;
  EXPECT_LE(phases, m.seconds * 1.01 + 1e-3) << "the phases take longer than the whole compile";
  EXPECT_GE(phases, m.seconds * 0.5) << "the phases miss most of the compile's time";
  const std::string text = p.describe("  ");
  for (const char *phase : {"import", "shape inference", "partitioning", "kernel compile", "1 unique", "Halide lowering",
                            "LLVM codegen", "linking"})
    EXPECT_NE(text.find(phase), std::string::npos) << text;
}

TEST(CompileModel, WrongInnerDimNamesTheInputAndDim) {
  CompiledModel m = compile_graph(relu_add_graph(), "relu_add", "", no_cache());
  Executor exec(m.plan, m.dir);
  try {
    exec.run({iota_f32({2, 4}, 0)});
    FAIL() << "expected a shape error";
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("Add_0"), std::string::npos) << msg;
  }
}

TEST(CompileModel, WrongDtypeIsRejected) {
  CompiledModel m = compile_graph(relu_add_graph(), "relu_add", "", no_cache());
  Executor exec(m.plan, m.dir);
  TensorData bad(DType::I32, {2, 3});
  EXPECT_THROW(exec.run({bad}), Error);
}

TEST(CompileModel, SecondCompileOfTheSameKeyComesFromTheCache) {
  char tmpl[] = "/tmp/disco-cache-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  CompileOptions o;
  o.cache_dir = tmpl;
  CompiledModel a = compile_graph(relu_add_graph(), "relu_add", "key1", o);
  int count = compile_count();
  CompiledModel b = compile_graph(relu_add_graph(), "relu_add", "key1", o);
  EXPECT_FALSE(a.cache_hit);
  EXPECT_TRUE(b.cache_hit);
  EXPECT_EQ(compile_count(), count);
  Executor exec(b.plan, b.dir);
  auto out = exec.run({iota_f32({1, 3}, 2)});  // 0, 2, 4 -> relu -> squares
  EXPECT_FLOAT_EQ(out[0].as<float>()[2], 16.0f);
  std::system(("rm -rf " + std::string(tmpl)).c_str());
}

// Calibration samples reach the backends as a compile option (no environment
// variable), and the cache tells compiles apart by the samples' bytes.
TEST(CompileModel, CalibrationSamplesArePartOfTheCacheKeyByContent) {
  char tmpl[] = "/tmp/disco-cache-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl, sample = dir + "/x.npy";
  auto write_sample = [&](const char *bytes) { std::ofstream(sample, std::ios::binary) << bytes; };
  CompileOptions o;
  o.cache_dir = dir;
  const std::string plain = compile_graph(relu_add_graph(), "relu_add", "key1", o).dir;
  o.backend_options.calibration_samples = {"x=" + sample};
  write_sample("first");
  const CompiledModel a = compile_graph(relu_add_graph(), "relu_add", "key1", o);
  const CompiledModel again = compile_graph(relu_add_graph(), "relu_add", "key1", o);
  write_sample("second");
  const CompiledModel b = compile_graph(relu_add_graph(), "relu_add", "key1", o);
  EXPECT_FALSE(a.cache_hit);
  EXPECT_NE(a.dir, plain);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.dir, a.dir);
  EXPECT_FALSE(b.cache_hit) << "a sample file with other bytes must not reuse the entry";
  EXPECT_NE(b.dir, a.dir);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace disco

namespace disco {
namespace {

TEST(CompileCache, EvictsTheLeastRecentlyUsedEntriesDownToTheBound) {
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/disco-evict-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  auto make_entry = [&](const std::string &name, int kib, int age_s) {
    fs::create_directory(root + "/" + name);
    std::ofstream(root + "/" + name + "/kernels.so") << std::string(kib * 1024, 'x');
    fs::last_write_time(root + "/" + name, fs::file_time_type::clock::now() - std::chrono::seconds(age_s));
  };
  make_entry("old-1", 100, 300);
  make_entry("kept-2", 100, 400);  // the oldest, but the caller is using it
  make_entry("mid-3", 100, 200);
  make_entry("new-4", 100, 100);
  fs::create_directory(root + "/tmp-inflight");  // a compile in progress is never touched
  EXPECT_EQ(evict_cache_entries(root, 250 * 1024, root + "/kept-2"), 2);
  EXPECT_FALSE(fs::exists(root + "/old-1"));
  EXPECT_FALSE(fs::exists(root + "/mid-3"));
  EXPECT_TRUE(fs::exists(root + "/kept-2"));
  EXPECT_TRUE(fs::exists(root + "/new-4"));
  EXPECT_TRUE(fs::exists(root + "/tmp-inflight"));
  EXPECT_EQ(evict_cache_entries(root, 250 * 1024, ""), 0) << "already within the bound";
  fs::remove_all(root);
}

}  // namespace
}  // namespace disco
