// Issue #23: a compile cache entry that was damaged after it was written (a
// truncated kernel library, overwritten bytes, a constants file of the same
// size with other values, a missing file) is found before anything of it is
// loaded, reported in one warning that names the file, and compiled again;
// the outputs are checked against plain loops. Before, these crashed inside
// dlopen (SIGBUS, SIGSEGV) or ran with the wrong weights. A damaged object in
// the kernel store (targets/kernel_store.h) and a damaged Halide runtime
// object in the cache root are warned about and compiled again too: a bad
// runtime object used to fail every later link, or be linked into every later
// kernel library and crash every run. Entries in use are not evicted.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "driver/compile_cache.h"
#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

namespace fs = std::filesystem;
using testing::random_f32;

constexpr int64_t kCols = 64;

// y = relu(x * w + b): a Halide kernel (kernels.so) and two constants (constants.bin).
Graph model() {
  GraphBuilder gb(17);
  std::string h = gb.input("x", DType::F32, {Dim::symbol("n"), kCols});
  h = gb.op("Mul", {h, gb.constant("w", random_f32({kCols}, 11))});
  h = gb.op("Add", {h, gb.constant("b", random_f32({kCols}, 12))});
  gb.output(gb.op("Relu", {h}));
  return gb.build();
}

void expect_right_outputs(const CompiledModel &m) {
  Executor exec(m.plan, m.dir);
  const TensorData x = random_f32({3, kCols}, 5);
  const TensorData w = random_f32({kCols}, 11), b = random_f32({kCols}, 12);
  const auto out = exec.run({x});
  ASSERT_EQ(out[0].num_elements(), 3 * kCols);
  for (int64_t i = 0; i < 3 * kCols; ++i) {
    const float want = std::max(x.as<float>()[i] * w.as<float>()[i % kCols] + b.as<float>()[i % kCols], 0.0f);
    ASSERT_NEAR(out[0].as<float>()[i], want, 1e-6) << "element " << i;
  }
}

struct Cache {
  std::string root = fs::temp_directory_path() / ("disco-heal-test-" + std::to_string(getpid()));
  std::vector<std::string> warnings;
  Cache() { fs::remove_all(root); }
  ~Cache() { fs::remove_all(root); }
  CompileOptions options() {
    CompileOptions o;
    o.backends = {"host"};
    o.cache_dir = root;
    o.warning = [this](const std::string &w) { warnings.push_back(w); };
    return o;
  }
  CompiledModel compile() { return compile_graph(model(), "heal", "key", options()); }
};

void overwrite(const std::string &path, int64_t at, const std::string &bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << path;
  f.seekp(at);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Damages the entry of a first compile, then compiles again: one warning
// naming `file`, a fresh compile with the right outputs, then a cache hit.
void expect_healed(const std::string &file, const std::function<void(const std::string &)> &damage) {
  Cache c;
  const CompiledModel first = c.compile();
  ASSERT_FALSE(first.cache_hit);
  expect_right_outputs(first);
  ASSERT_TRUE(fs::exists(first.dir + "/" + file)) << file;
  damage(first.dir + "/" + file);
  const CompiledModel again = c.compile();
  EXPECT_FALSE(again.cache_hit) << "a damaged entry must be compiled again";
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("damaged"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[0].find("'" + file + "'"), std::string::npos) << c.warnings[0];
  expect_right_outputs(again);
  const CompiledModel third = c.compile();
  EXPECT_TRUE(third.cache_hit) << "the entry was rebuilt";
  EXPECT_EQ(c.warnings.size(), 1u);
  expect_right_outputs(third);
}

TEST(CacheHeal, TruncatedKernelLibrary) {
  expect_healed("kernels.so", [](const std::string &p) { fs::resize_file(p, 1000); });
}

TEST(CacheHeal, OverwrittenKernelLibraryBytes) {
  expect_healed("kernels.so", [](const std::string &p) { overwrite(p, 4096, std::string(200, '\x5a')); });
}

TEST(CacheHeal, ConstantsOfTheSameSizeWithOtherValues) {
  expect_healed("constants.bin", [](const std::string &p) {
    const auto size = static_cast<int64_t>(fs::file_size(p));
    overwrite(p, 0, std::string(static_cast<size_t>(std::min<int64_t>(size, 64)), '\0'));
    EXPECT_EQ(static_cast<int64_t>(fs::file_size(p)), size);
  });
}

TEST(CacheHeal, MissingFile) {
  expect_healed("constants.bin", [](const std::string &p) { fs::remove(p); });
}

// A file replaced by a copy of itself (a restored backup: another inode and
// change time) is checksummed, found whole, and used.
TEST(CacheHeal, AnIntactCopyIsStillAHit) {
  Cache c;
  const CompiledModel first = c.compile();
  for (const char *file : {"kernels.so", "constants.bin"}) {
    const std::string p = first.dir + "/" + file, copy = p + ".copy";
    fs::copy_file(p, copy);
    fs::rename(copy, p);
  }
  const CompiledModel again = c.compile();
  EXPECT_TRUE(again.cache_hit);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
  expect_right_outputs(again);
}

TEST(CacheHeal, DamagedStoredKernelIsCompiledAgain) {
  Cache c;
  const CompiledModel first = c.compile();
  int damaged = 0;
  for (const auto &e : fs::recursive_directory_iterator(c.root))
    if (e.path().extension() == ".o" && e.path().parent_path().filename().string().rfind("kernels-", 0) == 0) {
      overwrite(e.path(), 2048, std::string(64, '\x11'));
      ++damaged;
    }
  ASSERT_GE(damaged, 1) << "the kernel store holds the model's kernel";
  fs::remove_all(first.dir);  // the model is new to the cache again; its kernel is in the store, damaged
  const CompiledModel again = c.compile();
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.profile.stored_kernels, 0) << "a damaged stored object must not be linked";
  ASSERT_EQ(c.warnings.size(), static_cast<size_t>(damaged));
  EXPECT_NE(c.warnings[0].find("is damaged ('k_"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[0].find(".o' does not match its checksum); compiling it again"), std::string::npos)
      << c.warnings[0];
  expect_right_outputs(again);
  fs::remove_all(again.dir);
  const CompiledModel third = c.compile();
  EXPECT_EQ(third.profile.stored_kernels, third.profile.unique_kernels) << "the store was mended";
  EXPECT_EQ(c.warnings.size(), static_cast<size_t>(damaged));
  expect_right_outputs(third);
}

// The Halide runtime object that every link of the cache shares (in its root).
std::string runtime_object_of(const std::string &root) {
  for (const auto &e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("halide_runtime-", 0) == 0 && e.path().extension() == ".o")
      return e.path().string();
  }
  return "";
}

// Damages the runtime object of a first compile, then compiles the model as
// new to the cache (its kernel from the store, so only the link needs the
// runtime): one warning naming the object, a runtime built again, the right
// outputs; then another link with no warning.
void expect_runtime_healed(const std::function<void(const std::string &)> &damage) {
  Cache c;
  const CompiledModel first = c.compile();
  const std::string runtime = runtime_object_of(c.root);
  ASSERT_FALSE(runtime.empty()) << "no halide_runtime-*.o in " << c.root;
  damage(runtime);
  fs::remove_all(first.dir);
  const CompiledModel again = c.compile();
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.profile.stored_kernels, again.profile.unique_kernels);
  ASSERT_EQ(c.warnings.size(), 1u);
  const std::string file = fs::path(runtime).filename().string();
  EXPECT_NE(c.warnings[0].find("is damaged ('" + file + "' does not match its checksum); compiling it again"),
            std::string::npos)
      << c.warnings[0];
  expect_right_outputs(again);
  fs::remove_all(again.dir);
  const CompiledModel third = c.compile();
  EXPECT_EQ(c.warnings.size(), 1u) << "the runtime object was rebuilt";
  expect_right_outputs(third);
}

TEST(CacheHeal, TruncatedRuntimeObject) {
  expect_runtime_healed([](const std::string &p) { fs::resize_file(p, 1000); });
}

TEST(CacheHeal, OverwrittenRuntimeObjectBytes) {
  expect_runtime_healed([](const std::string &p) {
    // The start of every 4 KiB page (code, tables, symbols): before, runs crashed (SIGTRAP).
    for (int64_t at = 0; at + 64 <= static_cast<int64_t>(fs::file_size(p)); at += 4096)
      overwrite(p, at, std::string(64, '\xcc'));
  });
}

// An entry that a process has in use (a CompiledModel alive) is not evicted,
// even with a bound of 0; once nothing uses it, it goes.
TEST(CacheHeal, AnEntryInUseIsNotEvicted) {
  Cache c;
  std::optional<CompiledModel> first = c.compile();
  const std::string dir = first->dir;
  EXPECT_EQ(evict_cache_entries(c.root, 0, ""), 1) << "only the kernel store goes";
  EXPECT_TRUE(fs::exists(dir + "/plan.txt"));
  {
    const CompiledModel hit = c.compile();
    EXPECT_TRUE(hit.cache_hit);
    first.reset();
    EXPECT_EQ(evict_cache_entries(c.root, 0, ""), 0) << "the hit has it in use";
    EXPECT_TRUE(fs::exists(dir + "/plan.txt"));
  }
  EXPECT_EQ(evict_cache_entries(c.root, 0, ""), 1);
  EXPECT_FALSE(fs::exists(dir));
  for (const auto &e : fs::directory_iterator(c.root))
    EXPECT_FALSE(e.is_directory()) << "left behind: " << e.path();
}

// An unwritable cache folder: the compile goes to a temporary folder with a
// warning and runs. Checked as a user other than root (root writes anywhere):
// a child process drops to `nobody` where the test runs as root.
TEST(CacheHeal, UnwritableCacheFolderCompilesInATemporaryFolder) {
  const std::string root = fs::temp_directory_path() / ("disco-readonly-cache-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  fs::permissions(root, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  std::fflush(stdout);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int rc = 1;
    if (getuid() == 0 && setuid(65534) != 0) _exit(3);  // nobody
    if (access(root.c_str(), W_OK) == 0) _exit(4);     // the folder must really be unwritable for us
    try {
      std::vector<std::string> warnings;
      CompileOptions o;
      o.backends = {"host"};
      o.cache_dir = root + "/cache";
      o.warning = [&](const std::string &w) { warnings.push_back(w); };
      const CompiledModel m = compile_graph(model(), "ro", "key", o);
      const bool warned = warnings.size() == 1 && warnings[0].find("cannot be written") != std::string::npos &&
                          warnings[0].find(root + "/cache") != std::string::npos;
      if (!warned) std::fprintf(stderr, "warnings: %zu %s\n", warnings.size(), warnings.empty() ? "" : warnings[0].c_str());
      expect_right_outputs(m);
      rc = warned && !::testing::Test::HasFailure() && m.dir.rfind(root, 0) != 0 ? 0 : 2;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "compile failed: %s\n", e.what());
    }
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  fs::remove_all(root);
  ASSERT_TRUE(WIFEXITED(status)) << "the compile as another user crashed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the compile threw; 2: no warning, a wrong output or a folder in the cache;"
                                    << " 3: setuid failed; 4: the folder was writable";
}

}  // namespace
}  // namespace disco
