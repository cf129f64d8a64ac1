// The CPU benchmark harness: disco (dynamic compile), disco (static compile
// per shape) and ONNX Runtime, side by side in one run, interleaved (disco
// and ONNX Runtime block by block, disco's two compiles within its blocks in
// short alternating sub-blocks) so that machine noise hits all three alike. Also a STREAM-style copy
// for the machine's memory bandwidth. Prints a markdown table (and writes it
// with --out). benchmarks/run.sh installs the peer and calls this.
// disco's OpenMP threads spin briefly here, as in the disco CLI:
// tools/openmp_short_spin.cc, linked into this program, sets that up before main.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "frontend/errors.h"
#include "frontend/random_tensor.h"
#include "driver/session.h"
#include "tools/cli_args.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Sweep {
  std::string model;
  std::vector<std::vector<int64_t>> shapes;
  double min_bytes_per_element = 0;  // memory-bound models: bytes moved per input element, at least
};

// CPU time the kernel counted for niced processes and for the hypervisor
// (steal), against all CPU time: the harness and its peer run at nice 0, so
// this is other work that took cores from the timed runs.
struct CpuClock {
  double nice = 0, steal = 0, total = 0;
};

CpuClock cpu_clock() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  double v[8] = {};  // user nice system idle iowait irq softirq steal
  f >> cpu;
  for (double &x : v) f >> x;
  CpuClock c;
  c.nice = v[1];
  c.steal = v[7];
  for (double x : v) c.total += x;
  return c;
}

std::string other_load_note(const CpuClock &a, const CpuClock &b) {
  const double total = b.total - a.total;
  if (total <= 0) return "";
  char text[160];
  std::snprintf(text, sizeof text, "Other load during the run: niced processes %.0f%%, hypervisor steal %.0f%% of CPU time.",
                100 * (b.nice - a.nice) / total, 100 * (b.steal - a.steal) / total);
  return text;
}

// Runs per interleaved block, and the least time each side runs untimed
// before a block (see the timing loop).
constexpr int kBlock = 5;
constexpr double kWarmupMs = 200;

// This VM's speed wanders by 10-50% over tens of milliseconds (two runs 2 ms
// apart differ by 2% at the median, 40 ms apart by 13%), so the two disco
// compiles are compared in sub-blocks of about kSubBlockMs, alternating, and
// their ratio is taken sub-block pair by pair. After each switch one run is
// untimed (caches and the other library's sleeping workers), unless a run is
// so long (kSwitchWarmupBelowMs) that the switch costs well under 0.1%.
constexpr double kSubBlockMs = 2;
constexpr double kSwitchWarmupBelowMs = 50;

// Not capped low: a 0.03 ms model needs thousands of runs to fill the warm-up.
int warmup_runs(double run_ms) { return std::clamp(static_cast<int>(kWarmupMs / std::max(run_ms, 1e-3)) + 1, 1, 100000); }

// This VM has slow spells that last a whole block (1.3-1.5x, on either side at
// random); a cell whose blocks are cheap runs four times as many of them, so
// that a few slow blocks move its median less.
constexpr double kCheapRunMs = 2;
constexpr int kCheapCellRunsFactor = 4;

// Longer than ONNX Runtime's and OpenMP's spinning after a run (10-20 ms here).
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

// Issue #5's sweep. layernorm_softmax reads its input and writes its output once: 8 bytes per element.
const std::vector<Sweep> kSweep = {
    {"mlp", {{1, 256}, {16, 256}, {256, 256}}},
    {"bert_layer", {{1, 32, 768}, {1, 128, 768}, {4, 128, 768}, {8, 384, 768}}},
    {"bert_small4", {{1, 64, 256}, {8, 128, 256}}},
    {"convnet", {{1, 3, 64, 64}, {8, 3, 128, 128}}},
    {"layernorm_softmax", {{1, 128, 768}, {16, 512, 768}}, 8},
};

std::string shape_text(const std::vector<int64_t> &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The ONNX Runtime peer (benchmarks/peers/ort_peer.js) as a child process.
class OrtPeer {
 public:
  OrtPeer(const std::string &node, const std::string &script) {
    int to_child[2], from_child[2];
    DISCO_CHECK(pipe(to_child) == 0 && pipe(from_child) == 0, "pipe failed");
    pid_ = fork();
    DISCO_CHECK(pid_ >= 0, "fork failed");
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      execlp(node.c_str(), node.c_str(), script.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
  }
  ~OrtPeer() {
    fclose(in_);
    fclose(out_);
    waitpid(pid_, nullptr, 0);
  }
  // Times `runs` runs after `warmup`; throws with the peer's message on error.
  std::vector<double> time(const std::string &model, const std::vector<int64_t> &shape, int threads, int runs,
                           int warmup) {
    std::string req = "{\"model\":\"" + model + "\",\"shape\":[";
    for (size_t i = 0; i < shape.size(); ++i) req += (i ? "," : "") + std::to_string(shape[i]);
    req += "],\"threads\":" + std::to_string(threads) + ",\"runs\":" + std::to_string(runs) +
           ",\"warmup\":" + std::to_string(warmup) + "}\n";
    std::fputs(req.c_str(), in_);
    std::fflush(in_);
    std::string line;
    for (int c; (c = std::fgetc(out_)) != EOF && c != '\n';) line += static_cast<char>(c);
    DISCO_CHECK(!line.empty(), "the ONNX Runtime peer exited (is benchmarks/peers installed?)");
    DISCO_CHECK(line.find("\"error\"") == std::string::npos, "ONNX Runtime: ", line);
    std::vector<double> ms;
    size_t p = line.find('[');
    while (p != std::string::npos && p + 1 < line.size() && line[p] != ']') {
      char *end = nullptr;
      ms.push_back(std::strtod(line.c_str() + p + 1, &end));
      p = static_cast<size_t>(end - line.c_str());
    }
    return ms;
  }

 private:
  pid_t pid_ = -1;
  FILE *in_ = nullptr, *out_ = nullptr;
};

// STREAM "copy": GB/s counting bytes read plus bytes written.
class StreamCopy {
 public:
  // 256 MiB per array: far beyond the caches.
  StreamCopy() : a_(kFloats, 1.0f), b_(kFloats, 0.0f) {}
  double gbps(int threads) {
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        const size_t lo = kFloats * t / threads, hi = kFloats * (t + 1) / threads;
        std::memcpy(b_.data() + lo, a_.data() + lo, (hi - lo) * sizeof(float));
      });
    for (auto &t : ts) t.join();
    return 2.0 * kFloats * sizeof(float) / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9;
  }
  double best_gbps(int threads, int runs) {
    double best = 0;
    for (int r = 0; r < runs; ++r) best = std::max(best, gbps(threads));
    return best;
  }

 private:
  static constexpr size_t kFloats = size_t(64) << 20;
  std::vector<float> a_, b_;
};

// Outputs are written into the same tensors run after run: as with ONNX
// Runtime's arena, no run pays for touching fresh pages.
double run_ms(disco::Session &s, const std::vector<disco::TensorData> &in, std::vector<disco::TensorData> &out) {
  auto t0 = Clock::now();
  s.run(in, out);
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

const char *kHelp =
    "usage: harness [--models DIR] [--peer ort_peer.js] [--node node] [--runs N] [--threads 1,2]\n"
    "               [--only MODEL] [--targets B,host] [--out FILE]\n"
    "Times each model of the sweep with disco (one dynamic compile), disco (a static compile\n"
    "per shape) and ONNX Runtime (all graph optimizations), interleaved, at each thread\n"
    "count set explicitly on both sides; medians of N runs (default 40; four times as many\n"
    "for cells under 2 ms) after warm-up. disco's two compiles alternate in sub-blocks of\n"
    "about 2 ms, and their speed ratio is taken pair by pair.\n";

}  // namespace

int main(int argc, char **argv) {
  try {
    std::string models = std::string(DISCO_SOURCE_DIR) + "/../shared/models";
    std::string peer = std::string(DISCO_SOURCE_DIR) + "/benchmarks/peers/ort_peer.js", node = "node", out, only,
                targets = "onednn,host";
    int runs = 40;
    std::vector<int> thread_counts = {1, 2};
    const disco::CliArgs args(argc, argv, 1, {"help"},
                              {"models", "peer", "node", "out", "only", "targets", "runs", "threads"});
    if (args.flag("help")) {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (!args.positional().empty()) throw disco::UsageError("unexpected argument '" + args.positional()[0] + "'");
    models = args.get("models", models);
    peer = args.get("peer", peer);
    node = args.get("node", node);
    out = args.get("out", out);
    only = args.get("only", only);
    targets = args.get("targets", targets);
    runs = std::max(1, args.get_int("runs", runs));
    if (const std::string t = args.get("threads", ""); !t.empty()) {
      thread_counts.clear();
      std::stringstream ss(t);
      for (std::string n; std::getline(ss, n, ',');) {
        const int v = std::atoi(n.c_str());
        if (v < 1) throw disco::UsageError("--threads takes counts like 1,2; got '" + t + "'");
        thread_counts.push_back(v);
      }
    }
    disco::CompileOptions base;
    base.backends = disco::parse_backend_list(targets);

    const CpuClock start_clock = cpu_clock();
    std::ostringstream md;
    StreamCopy copy;
    std::map<int, double> bandwidth;
    md << "Memory bandwidth (STREAM copy, best of 10):";
    for (int t : thread_counts) {
      bandwidth[t] = copy.best_gbps(t, 10);
      char b[64];
      std::snprintf(b, sizeof b, " %d thread(s) %.1f GB/s;", t, bandwidth[t]);
      md << b;
    }
    md << "\n\ndisco backends: " << targets << "; ONNX Runtime: CPU execution provider, all graph optimizations; "
       << "medians of " << runs << " runs (" << runs * kCheapCellRunsFactor << " where ONNX Runtime takes under " << kCheapRunMs
       << " ms), interleaved in blocks of " << kBlock
       << " taking turns, each block after at least " << kWarmupMs << " ms (and one run) of untimed warm-up and a 50 ms pause; "
       << "within disco's blocks the dynamic and static compiles alternate in sub-blocks of about " << kSubBlockMs
       << " ms (at least one run, each after one untimed run unless a run takes " << kSwitchWarmupBelowMs << " ms or more). "
       << "Times are medians of all runs; dynamic / static speed is the median over sub-block pairs of the static "
          "sub-block's median over the dynamic one's.\n\n";
    md << "| model | shape | threads | disco dynamic ms | disco static ms | ONNX Runtime ms | dynamic / ORT | "
          "dynamic speed / static speed | kernels | cold compile s (dynamic) | notes |\n";
    md << "|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::fputs(md.str().c_str(), stdout);
    std::fflush(stdout);

    OrtPeer ort(node, peer);
    for (const auto &sw : kSweep) {
      if (!only.empty() && sw.model != only) continue;
      const std::string path = models + "/" + sw.model + ".onnx";
      if (!exists(path)) {
        std::fprintf(stderr, "harness: %s not found; skipping\n", path.c_str());
        continue;
      }
      disco::CompileOptions cold = base;
      cold.use_cache = false;  // the table's compile time is a cold compile's
      disco::Session dynamic = disco::Session::from_onnx(path, cold);
      const double compile_s = dynamic.last_compile().seconds;
      for (const auto &shape : sw.shapes) {
        disco::CompileOptions st = base;
        st.static_shapes[dynamic.inputs()[0].name] = shape;
        disco::Session fixed = disco::Session::from_onnx(path, st);
        std::vector<disco::TensorData> in{disco::random_tensor(disco::DType::F32, shape, 7)};
        for (int threads : thread_counts) {
          dynamic.set_num_threads(threads);
          fixed.set_num_threads(threads);
          std::vector<double> d, s, o;
          std::vector<double> pair_speed;  // static ms / dynamic ms, sub-block pair by sub-block pair
          std::vector<double> copy_gbps;  // memory-bound models: the copy beside this cell, block by block
          std::vector<disco::TensorData> dynamic_out, fixed_out;
          for (int w = 0; w < 3; ++w) {
            run_ms(dynamic, in, dynamic_out);
            run_ms(fixed, in, fixed_out);
          }
          ort.time(path, shape, threads, 1, 3);
          // disco's warm-up per block, in runs of each compile: enough for kWarmupMs
          // of the faster; its sub-blocks, about kSubBlockMs of the slower.
          const double dynamic_ms = run_ms(dynamic, in, dynamic_out), fixed_ms = run_ms(fixed, in, fixed_out);
          const int disco_warmup = warmup_runs(std::min(dynamic_ms, fixed_ms));
          const double slower_ms = std::max(dynamic_ms, fixed_ms);
          const double ort_ms = median(ort.time(path, shape, threads, 3, 0));
          const int ort_warmup = warmup_runs(ort_ms);
          const int cell_runs = ort_ms < kCheapRunMs ? runs * kCheapCellRunsFactor : runs;
          const int sub_runs = std::max(1, static_cast<int>(std::ceil(kSubBlockMs / std::max(slower_ms, 1e-3))));
          const int switch_warmup = slower_ms < kSwitchWarmupBelowMs ? 1 : 0;
          // disco and ONNX Runtime take turns in blocks rather than run by
          // run: each runtime's idle workers spin for a while after a run
          // (ONNX Runtime's by default) and would take the cores from the
          // other. A pause after every block leaves each side the machine to
          // itself; this VM then runs slowly for a while (single runs still
          // sped up by a third over the first 100 ms after a 30 ms warm-up),
          // so each block starts with its own warm-up. Which goes first
          // alternates from block to block. The two disco compiles share one
          // process and its OpenMP team, so within disco's block they
          // alternate in sub-blocks (see kSubBlockMs).
          for (int done = 0, block = 0; done < cell_runs; done += kBlock, ++block) {
            const int n = std::min(kBlock, cell_runs - done);
            for (int k = 0; k < 2; ++k) {
              if ((block + k) % 2 == 0) {
                for (int r = 0; r < disco_warmup; ++r) {
                  run_ms(dynamic, in, dynamic_out);
                  run_ms(fixed, in, fixed_out);
                }
                for (int pair = 0; pair < n; ++pair) {
                  double sub_median[2];  // dynamic, static
                  for (int half = 0; half < 2; ++half) {
                    // Which goes first alternates too.
                    const int side = (block + pair + half) % 2;
                    disco::Session &session = side == 0 ? dynamic : fixed;
                    std::vector<disco::TensorData> &outs = side == 0 ? dynamic_out : fixed_out;
                    for (int r = 0; r < switch_warmup; ++r) run_ms(session, in, outs);
                    std::vector<double> sub;
                    for (int r = 0; r < sub_runs; ++r) sub.push_back(run_ms(session, in, outs));
                    sub_median[side] = median(sub);
                    std::vector<double> &all = side == 0 ? d : s;
                    all.insert(all.end(), sub.begin(), sub.end());
                  }
                  pair_speed.push_back(sub_median[1] / sub_median[0]);
                }
              } else {
                for (double ms : ort.time(path, shape, threads, n, ort_warmup)) o.push_back(ms);
              }
              settle();
            }
            // The machine's speed drifts over minutes here, so a memory-bound
            // model's share is taken against the copy measured beside it.
            if (sw.min_bytes_per_element > 0) {
              for (auto t0 = Clock::now(); std::chrono::duration<double, std::milli>(Clock::now() - t0).count() < kWarmupMs;)
                copy.gbps(threads);
              for (int r = 0; r < n; ++r) copy_gbps.push_back(copy.gbps(threads));
              settle();
            }
          }
          const double dm = median(d), sm = median(s), om = median(o);
          std::string notes;
          if (sw.min_bytes_per_element > 0) {
            double elems = 1;
            for (auto x : shape) elems *= static_cast<double>(x);
            // Medians on both sides, as for the times; the copy's best (STREAM's figure) too.
            const double gbps = sw.min_bytes_per_element * elems / (dm * 1e-3) / 1e9;
            const double copy_median = median(copy_gbps);
            const double copy_best = *std::max_element(copy_gbps.begin(), copy_gbps.end());
            char b[160];
            std::snprintf(b, sizeof b, "%.1f GB/s = %.0f%% of the copy's median %.1f GB/s beside it (%.0f%% of its best, %.1f)",
                          gbps, 100 * gbps / copy_median, copy_median, 100 * gbps / copy_best, copy_best);
            notes = b;
          }
          char line[512];
          std::snprintf(line, sizeof line, "| %s | %s | %d | %.3f | %.3f | %.3f | %.2f | %.2f | %zu | %.2f | %s |\n",
                        sw.model.c_str(), shape_text(shape).c_str(), threads, dm, sm, om, dm / om, median(pair_speed),
                        dynamic.last_compile().plan.steps.size(), compile_s, notes.c_str());
          md << line;
          std::fputs(line, stdout);
          std::fflush(stdout);
        }
      }
    }
    const std::string load = other_load_note(start_clock, cpu_clock());
    md << "\n" << load << "\n";
    std::printf("\n%s\n", load.c_str());
    if (!out.empty()) {
      std::ofstream f(out);
      f << md.str();
      DISCO_CHECK(f.good(), "cannot write '", out, "'");
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "harness: error: %s\n", e.what());
    return 1;
  }
}
