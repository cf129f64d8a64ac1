// Issue #26: fusion groups with the same ops, shapes, read values and
// schedule share one compiled kernel; groups that differ in anything baked
// into the code do not; and the kernels compile in parallel to the same plan
// and the same object bytes as one at a time. Outputs are checked against
// plain loops, so a wrongly shared kernel (one baking another group's values)
// fails them.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "driver/compile_model.h"
#include "frontend/errors.h"
#include "targets/kernel_jobs.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::random_f32;

constexpr int64_t kCols = 16;

CompileOptions host_no_cache(int workers = 0) {
  CompileOptions o;
  o.backends = {"host"};
  o.use_cache = false;
  o.compile_workers = workers;
  return o;
}

// softmax over the columns (axis 0) of x + b, then of that + c, ...: one
// kernel each (a reduction over other than the last axis ends a group). The biases differ (they are
// kernel arguments); `exponents` puts a Pow by that constant before the Add
// of each stage (0: none), which the Pow lowering reads and bakes in.
Graph softmax_chain(const std::vector<int> &exponents) {
  GraphBuilder gb(17);
  std::string h = gb.input("x", DType::F32, {Dim::symbol("n"), kCols});
  for (size_t i = 0; i < exponents.size(); ++i) {
    const std::string s = std::to_string(i);
    if (exponents[i]) h = gb.op("Pow", {h, gb.constant("e" + s, testing::f32({}, {float(exponents[i])}))});
    h = gb.op("Add", {h, gb.constant("b" + s, random_f32({kCols}, 7 + i))});
    h = gb.op("Softmax", {h}, testing::attrs({{"axis", attr_int(0)}}));
  }
  gb.output(h);
  return gb.build();
}

std::vector<float> reference(const std::vector<int> &exponents, const TensorData &x) {
  std::vector<float> v(x.as<float>(), x.as<float>() + x.num_elements());
  const int64_t rows = x.num_elements() / kCols;
  for (size_t i = 0; i < exponents.size(); ++i) {
    const TensorData b = random_f32({kCols}, 7 + i);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < kCols; ++c) {
        float &e = v[r * kCols + c];
        if (exponents[i]) e = std::pow(e, float(exponents[i]));
        e += b.as<float>()[c];
      }
    for (int64_t c = 0; c < kCols; ++c) {
      double mx = -INFINITY, sum = 0;
      for (int64_t r = 0; r < rows; ++r) mx = std::max(mx, double(v[r * kCols + c]));
      for (int64_t r = 0; r < rows; ++r) sum += std::exp(v[r * kCols + c] - mx);
      for (int64_t r = 0; r < rows; ++r) v[r * kCols + c] = float(std::exp(v[r * kCols + c] - mx) / sum);
    }
  }
  return v;
}

std::vector<std::string> kernels_of(const Plan &plan) {
  std::vector<std::string> k;
  for (const auto &st : plan.steps)
    if (!st.kernel.empty()) k.push_back(st.kernel);
  return k;
}

void expect_matches_reference(const CompiledModel &m, const std::vector<int> &exponents) {
  Executor exec(m.plan, m.dir);
  for (int64_t rows : {1, 5}) {
    TensorData x = random_f32({rows, kCols}, 3, 0.5f);
    for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_as<float>()[i] = std::fabs(x.as<float>()[i]) + 0.1f;
    const auto out = exec.run({x});
    const std::vector<float> want = reference(exponents, x);
    ASSERT_EQ(out[0].num_elements(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[0].as<float>()[i], want[i], 1e-5) << "element " << i;
  }
}

TEST(KernelSharing, IdenticalGroupsShareOneKernelAndObject) {
  const std::vector<int> stages = {0, 0, 0};
  const CompiledModel m = compile_graph(softmax_chain(stages), "chain", "", host_no_cache());
  const auto k = kernels_of(m.plan);
  ASSERT_EQ(k.size(), 3u) << "expected one kernel step per softmax stage";
  EXPECT_EQ(std::set<std::string>(k.begin(), k.end()).size(), 1u) << "the three stages differ only in their biases";
  EXPECT_EQ(m.profile.kernels, 3);
  EXPECT_EQ(m.profile.unique_kernels, 1);
  expect_matches_reference(m, stages);
}

TEST(KernelSharing, GroupsDifferingInABakedValueDoNotShare) {
  // Pow by 2 and by 3 lower to different multiplies; the third stage repeats the first.
  const std::vector<int> stages = {2, 3, 2};
  const CompiledModel m = compile_graph(softmax_chain(stages), "pows", "", host_no_cache());
  const auto k = kernels_of(m.plan);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_NE(k[0], k[1]);
  EXPECT_EQ(k[0], k[2]);
  EXPECT_EQ(m.profile.unique_kernels, 2);
  expect_matches_reference(m, stages);
}

// Across models (issue #26): a model compiled into a cache that already holds
// some of its kernels, from another model, links those and compiles the
// rest; the outputs show that each stored kernel is the right one.
TEST(KernelSharing, ModelsInOneCacheShareKernels) {
  const std::string cache =
      std::filesystem::temp_directory_path() / ("disco-kernel-store-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(cache);
  CompileOptions o;
  o.backends = {"host"};
  o.cache_dir = cache;
  std::vector<std::string> warnings;
  o.warning = [&](const std::string &w) { warnings.push_back(w); };
  const std::vector<int> first = {2, 3}, second = {3, 0, 2};
  const CompiledModel a = compile_graph(softmax_chain(first), "first", "key-a", o);
  EXPECT_EQ(a.profile.unique_kernels, 2);
  EXPECT_EQ(a.profile.stored_kernels, 0) << "the cache was empty";
  expect_matches_reference(a, first);

  const CompiledModel b = compile_graph(softmax_chain(second), "second", "key-b", o);
  EXPECT_FALSE(b.cache_hit);
  EXPECT_EQ(b.profile.unique_kernels, 3);
  EXPECT_EQ(b.profile.stored_kernels, 2) << "Pow 3 and Pow 2 stages come from the first model";
  const auto ka = kernels_of(a.plan), kb = kernels_of(b.plan);
  ASSERT_EQ(kb.size(), 3u);
  EXPECT_EQ(kb[0], ka[1]);
  EXPECT_EQ(kb[2], ka[0]);
  expect_matches_reference(b, second);

  // A stored kernel whose key file says something else (a damaged entry, or
  // a hash collision) is compiled again, not used; a damaged one with a warning.
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  int damaged = 0;
  for (const auto &e : std::filesystem::recursive_directory_iterator(cache))
    if (e.path().extension() == ".key" && e.path().stem() == kb[0]) {
      std::ofstream(e.path(), std::ios::trunc) << "another kernel";
      ++damaged;
    }
  ASSERT_EQ(damaged, 1) << "expected one key file for " << kb[0];
  const CompiledModel c = compile_graph(softmax_chain(second), "third", "key-c", o);
  EXPECT_EQ(c.profile.stored_kernels, 2) << "only the undamaged Pow 2 and plain stages are used";
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("the compile cache entry '" + cache), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("is damaged ('" + kb[0] + ".key' is damaged); compiling it again"), std::string::npos)
      << warnings[0];
  expect_matches_reference(c, second);

  // Without the cache nothing is read from or written to any store.
  CompileOptions off = o;
  off.use_cache = false;
  const CompiledModel d = compile_graph(softmax_chain(second), "fourth", "key-d", off);
  EXPECT_EQ(d.profile.stored_kernels, 0);
  std::filesystem::remove_all(cache);
}

std::string file_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// What an AOT library is made of: the plan (the generated driver's input) and
// the kernel objects, written under `out` by a compile in a child process of
// this test. Halide names Funcs from process-wide counters, so two compiles in
// one process never give the same bytes; two processes that start alike do
// (as two runs of `disco compile` do).
void compile_aot_parts(int workers, const std::string &out) {
  std::fflush(stdout);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int rc = 1;
    try {
      CompileOptions o = host_no_cache(workers);
      o.keep_objects = true;
      const CompiledModel m = compile_graph(softmax_chain({2, 3, 0, 2}), "par", "", o);
      std::filesystem::create_directories(out);
      m.plan.save(out + "/plan.txt");
      std::ofstream(out + "/profile") << m.profile.unique_kernels << " " << m.profile.compile_workers;
      int n = 0;
      for (const auto &obj : m.objects)
        if (obj.rfind(m.dir, 0) == 0) std::filesystem::copy_file(obj, out + "/k" + std::to_string(n++) + ".o");
      std::filesystem::remove_all(m.dir);
      rc = 0;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "compile failed: %s\n", e.what());
    }
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the compile in a child process failed";
}

TEST(KernelSharing, ParallelCompileGivesTheSamePlanAndObjectsAsSerial) {
  const std::string dir = std::filesystem::temp_directory_path() / ("disco-parallel-test-" + std::to_string(getpid()));
  compile_aot_parts(1, dir + "/serial");
  compile_aot_parts(3, dir + "/parallel");
  EXPECT_EQ(file_bytes(dir + "/serial/profile"), "3 1");
  EXPECT_EQ(file_bytes(dir + "/parallel/profile"), "3 3");
  EXPECT_EQ(file_bytes(dir + "/serial/plan.txt"), file_bytes(dir + "/parallel/plan.txt"));
  for (int i = 0; i < 3; ++i) {
    const std::string k = "/k" + std::to_string(i) + ".o";
    const std::string a = file_bytes(dir + "/serial" + k), b = file_bytes(dir + "/parallel" + k);
    EXPECT_FALSE(a.empty()) << k;
    EXPECT_TRUE(a == b) << "kernel object " << k << " differs between 1 and 3 workers";
  }
  std::filesystem::remove_all(dir);
}

// The worker pool itself: every job runs, times add up, and a job that
// throws or dies is reported by its kernel's name.
TEST(KernelJobs, RunsEveryJobAndNamesTheOneThatFailed) {
  const std::string dir = std::filesystem::temp_directory_path() / "disco-kernel-jobs-test";
  std::filesystem::create_directories(dir);
  std::vector<KernelJob> jobs;
  for (int i = 0; i < 5; ++i) {
    const std::string path = dir + "/k" + std::to_string(i);
    jobs.push_back({"k" + std::to_string(i), path, [path, i](CompileProfile &p) {
                      std::ofstream(path) << i;
                      p.halide_s = 1;
                      p.codegen_s = 0.5;
                    }});
  }
  CompileProfile profile;
  run_kernel_jobs(jobs, 2, profile, nullptr);
  EXPECT_DOUBLE_EQ(profile.halide_s, 5);
  EXPECT_DOUBLE_EQ(profile.codegen_s, 2.5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(file_bytes(dir + "/k" + std::to_string(i)), std::to_string(i));

  jobs[3].compile = [](CompileProfile &) { throw Error("Halide could not compile kernel k3: boom"); };
  jobs[1].compile = [](CompileProfile &) { std::abort(); };
  try {
    run_kernel_jobs(jobs, 2, profile, nullptr);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    const std::string msg = e.what();  // the first failure in job order: the process that died
    EXPECT_NE(msg.find("kernel k1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("signal"), std::string::npos) << msg;
  }
  jobs[1].compile = [](CompileProfile &) {};
  try {
    run_kernel_jobs(jobs, 3, profile, nullptr);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("k3: boom"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace disco
