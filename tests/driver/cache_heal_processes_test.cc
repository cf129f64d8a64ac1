// Issue #23: processes that share one compile cache while others evict from
// it. Readers run one model over and over with `disco run` (a warm start, or a
// compile when its entry was evicted); meanwhile one process compiles other
// models with DISCO_CACHE_MAX_MB=0, so that every compile evicts all it can,
// and another evicts every 2 ms, so that evictions land inside the readers'
// loads. Every run must succeed with the right outputs and no warning.
// Before, an entry was removed file by file under the processes loading it,
// and runs failed with "cannot open plan file '.../plan.txt'", "cannot load
// kernel library '.../kernels.so': No such file or directory" or "cannot open
// '.../constants.bin'" (2 of 75 runs with the compiling evictor alone; every
// time here). Now an entry being loaded is marked in use and not evicted
// (driver/cache_entry_in_use.h, driver/compile_cache.h).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/compile_cache.h"
#include "onnx/onnx_pb.h"
#include "runtime/npy.h"
#include "tests/support/command.h"
#include "tests/support/onnx_protos.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kCols = 64;

// y = relu(x * w + b), w and b from `seed`: one kernel, two constants.
void write_model(const std::string &path, uint32_t seed) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  testing::add_input(g, "x", {"n", std::to_string(kCols)});
  for (const char *name : {"w", "b"}) {
    const TensorData t = testing::random_f32({kCols}, seed + (name[0] == 'b'));
    testing::add_initializer(g, name, onnx::TensorProto::FLOAT, {kCols})
        ->set_raw_data(t.data(), static_cast<size_t>(t.num_bytes()));
  }
  testing::add_node(g, "Mul", {"x", "w"}, {"xw"});
  testing::add_node(g, "Add", {"xw", "b"}, {"xwb"});
  testing::add_node(g, "Relu", {"xwb"}, {"y"});
  g->add_output()->set_name("y");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

TensorData reference(const TensorData &x, uint32_t seed) {
  const TensorData w = testing::random_f32({kCols}, seed), b = testing::random_f32({kCols}, seed + 1);
  TensorData y = x;
  for (int64_t i = 0; i < x.num_elements(); ++i)
    y.mutable_as<float>()[i] = std::max(x.as<float>()[i] * w.as<float>()[i % kCols] + b.as<float>()[i % kCols], 0.0f);
  return y;
}

std::string read_text(const std::string &path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `script` with /bin/sh in a child process, its output to `log`.
pid_t start_shell(const std::string &script, const std::string &log) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(127);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  return pid;
}

TEST(CacheHealAcrossProcesses, EvictionNeverFailsAConcurrentRun) {
  // DISCO_TEST_BINARY: another build of disco, to see an older one fail here.
  const char *other = std::getenv("DISCO_TEST_BINARY");
  const std::string disco = other && *other ? other : DISCO_BINARY;
  const std::string dir = testing::make_temp_dir("cache-heal-processes");
  const std::string cache = dir + "/cache";
  write_model(dir + "/shared.onnx", 11);
  const TensorData x = testing::random_f32({3, kCols}, 5);
  write_npy(dir + "/x.npy", x);
  write_npy(dir + "/y.npy", reference(x, 11));
  constexpr int kOthers = 4, kReaders = 3;
  for (int i = 0; i < kOthers; ++i) write_model(dir + "/other" + std::to_string(i) + ".onnx", 100 + 2 * i);

  // One core's worth of work each: the readers' runs, and every compile.
  const std::string run = "DISCO_CACHE_DIR=" + cache + " " + disco + " run --targets host --threads 1 --compile-jobs 1 ";
  // The readers run until the evictor is done (and at least 5 times), and stop at the first failure.
  std::vector<pid_t> readers;
  for (int r = 0; r < kReaders; ++r)
    readers.push_back(start_shell("i=0; while [ $i -lt 5 ] || [ ! -e " + dir + "/done ]; do " + run + dir +
                                      "/shared.onnx --input x=" + dir + "/x.npy --expect y=" + dir +
                                      "/y.npy >/dev/null || { echo \"run $i failed\"; exit 1; }; i=$((i+1)); done; "
                                      "echo \"$i runs\"",
                                  dir + "/reader" + std::to_string(r) + ".log"));
  std::string evict = "sleep 1";  // the readers go first
  for (int i = 0; i < kOthers; ++i)
    evict += "; DISCO_CACHE_MAX_MB=0 " + run + dir + "/other" + std::to_string(i) + ".onnx --shape x=3x64 || exit 1";
  const pid_t evictor = start_shell(evict + "; touch " + dir + "/done", dir + "/evictor.log");
  // And an eviction every 2 ms besides, so that some land inside the readers' loads.
  std::fflush(stdout);
  const pid_t fast_evictor = fork();
  if (fast_evictor == 0) {
    while (!fs::exists(dir + "/done")) {
      evict_cache_entries(cache, 0, "");
      usleep(2000);
    }
    _exit(0);
  }

  int status = 0;
  waitpid(evictor, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the evicting compiles failed:\n"
                                                              << read_text(dir + "/evictor.log");
  std::ofstream(dir + "/done");  // the readers stop even when the evictor failed
  waitpid(fast_evictor, &status, 0);
  for (int r = 0; r < kReaders; ++r) {
    waitpid(readers[r], &status, 0);
    const std::string log = read_text(dir + "/reader" + std::to_string(r) + ".log");
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reader " << r << ":\n" << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << "reader " << r << ":\n" << log;
    std::printf("reader %d: %s", r, log.c_str());
  }
  const std::string evictor_log = read_text(dir + "/evictor.log");
  EXPECT_EQ(evictor_log.find("warning"), std::string::npos) << evictor_log;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace disco
