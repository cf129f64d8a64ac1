// disco's own Halide kernels against oneDNN, kernel by kernel, in GFLOP/s:
// sgemm (M in {1, 8, 32, 128, 512}, N and K in {256, 768, 3072}), the
// convolutions of issue #20 (ResNet 3x3 64->64 at 56x56, 1x1 256->64 at
// 56x56, depthwise 3x3 at 112x112; 3x3 convs on the 28x28 and 7x7 maps of a
// small network's late layers) and a ConvTranspose 2x2 stride 2, at 1
// and 2 threads, beside the machine's measured peak (FMA chains in
// registers, one thread per core).
//
// Each kernel is a one-node graph compiled twice, once per backend list:
// `--targets host` (disco's Halide kernels) and `onednn,host` (oneDNN
// through disco's glue). M (or the batch) is symbolic: one dynamic compile
// serves every M. Timing is interleaved: blocks of runs alternate between
// the two, and each side's time is the median over its blocks. Weights are
// constants, as in a model.
//
//   kernels_bench [--quick] [--filter TEXT] [--out FILE.md]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "driver/backend_registry.h"
#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "frontend/random_tensor.h"
#include "runtime/executor.h"

namespace {

using namespace disco;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TensorData filled(std::vector<int64_t> shape, int seed) {
  TensorData t(DType::F32, shape);
  float *p = t.mutable_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<float>(((i * 37 + seed * 11) % 23) - 11) / 64.0f;
  return t;
}

// GFLOP/s of independent FMA chains on one core (AVX2 + FMA; 10 chains
// cover the FMA latency of two pipes).
__attribute__((target("avx2,fma"))) double fma_gflops_one(double secs) {
  __m256 acc[10];
  for (int i = 0; i < 10; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  int64_t iters = 0;
  auto t0 = Clock::now();
  do {
    for (int r = 0; r < 1000; ++r)
      for (int i = 0; i < 10; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    iters += 1000;
  } while (seconds_since(t0) < secs);
  float sink = 0;
  for (int i = 0; i < 10; ++i) sink += _mm256_cvtss_f32(acc[i]);
  volatile float keep = sink;
  (void)keep;
  return iters * 10.0 * 8 * 2 / seconds_since(t0) / 1e9;
}

double peak_gflops(int threads) {
  std::vector<double> per(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { per[t] = fma_gflops_one(0.5); });
  for (auto &t : ts) t.join();
  double sum = 0;
  for (double g : per) sum += g;
  return sum;
}

struct Kernel {
  std::string name;
  Graph graph;
  std::vector<TensorData> inputs;
  double flops;
  std::string graph_key;  // kernels with the same key share one compile (sgemm: N and K; M is symbolic)
};

Kernel sgemm(int64_t m, int64_t n, int64_t k) {
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {Dim::symbol("m"), k});
  auto w = b.constant("w", filled({k, n}, 2));
  b.output(b.op("MatMul", {a, w}));
  const std::string nk = "N=" + std::to_string(n) + " K=" + std::to_string(k);
  return {"sgemm M=" + std::to_string(m) + " " + nk, b.build(), {filled({m, k}, 1)}, 2.0 * m * n * k, "sgemm " + nk};
}

Kernel conv(const std::string &name, int64_t batch, int64_t cin, int64_t cout, int64_t hw, int64_t kernel,
            int64_t group) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), cin, Dim::symbol("h"), Dim::symbol("w")});
  auto w = b.constant("w", filled({cout, cin / group, kernel, kernel}, 3));
  const int64_t pad = kernel / 2;
  b.output(b.op("Conv", {x, w},
                {{"group", attr_int(group)},
                 {"pads", attr_ints({pad, pad, pad, pad})},
                 {"kernel_shape", attr_ints({kernel, kernel})}}));
  double flops = 2.0 * batch * cout * hw * hw * (cin / group) * kernel * kernel;
  return {name, b.build(), {filled({batch, cin, hw, hw}, 4)}, flops, name};
}

Kernel conv_transpose(int64_t batch, int64_t cin, int64_t cout, int64_t hw) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), cin, Dim::symbol("h"), Dim::symbol("w")});
  auto w = b.constant("w", filled({cin, cout, 2, 2}, 5));
  b.output(b.op("ConvTranspose", {x, w}, {{"strides", attr_ints({2, 2})}, {"kernel_shape", attr_ints({2, 2})}}));
  double flops = 2.0 * batch * cin * cout * hw * hw * 4;
  const std::string name = "convtranspose 2x2 s2 " + std::to_string(cin) + "->" + std::to_string(cout) + " at " +
                           std::to_string(hw) + "^2 (x" + std::to_string(batch) + ")";
  return {name, b.build(), {filled({batch, cin, hw, hw}, 6)}, flops, name};
}

std::unique_ptr<Executor> compiled(const Graph &g, const std::vector<std::string> &backends, CompiledModel *keep) {
  CompileOptions o;
  o.use_cache = false;
  o.backends = backends;
  *keep = compile_graph(g, "kbench", "", o);
  return std::make_unique<Executor>(keep->plan, keep->dir);
}

// Median seconds per run of each executor, interleaved in blocks.
std::vector<double> interleaved(std::vector<Executor *> execs, const std::vector<TensorData> &in, int blocks) {
  std::vector<std::vector<double>> per(execs.size());
  std::vector<std::vector<TensorData>> outs(execs.size());
  // Runs per block: about 20 ms of the first one.
  for (size_t i = 0; i < execs.size(); ++i) execs[i]->run(in, outs[i]);
  auto t0 = Clock::now();
  execs[0]->run(in, outs[0]);
  const int reps = std::max(1, std::min(200, static_cast<int>(0.02 / std::max(seconds_since(t0), 1e-6))));
  for (int bl = 0; bl < blocks; ++bl)
    for (size_t i = 0; i < execs.size(); ++i) {
      execs[i]->run(in, outs[i]);  // warm
      auto t = Clock::now();
      for (int r = 0; r < reps; ++r) execs[i]->run(in, outs[i]);
      per[i].push_back(seconds_since(t) / reps);
    }
  std::vector<double> med;
  for (auto &v : per) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

}  // namespace

int main(int argc, char **argv) {
  bool quick = false;
  std::string out_path, filter;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: kernels_bench [--quick] [--filter TEXT] [--out FILE.md]\n\n"
          "GFLOP/s of disco's Halide kernels (--targets host) and oneDNN (onednn,host) for sgemm,\n"
          "convolutions and a ConvTranspose, at 1 and 2 threads, interleaved, beside the measured\n"
          "FMA peak. --quick: fewer shapes and blocks. --filter: only kernels whose name contains TEXT.\n"
          "--out: also write the table as markdown.\n");
      return 0;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::fprintf(stderr, "kernels_bench: unknown argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  try {
    install_backend_runtimes();  // oneDNN's glue for the onednn,host plans
    std::vector<Kernel> kernels;
    const std::vector<int64_t> ms = quick ? std::vector<int64_t>{1, 32, 128} : std::vector<int64_t>{1, 8, 32, 128, 512};
    const std::vector<int64_t> nk = quick ? std::vector<int64_t>{768} : std::vector<int64_t>{256, 768, 3072};
    for (int64_t n : nk)
      for (int64_t k : nk)
        for (int64_t m : ms) kernels.push_back(sgemm(m, n, k));
    kernels.push_back(conv("conv 3x3 64->64 at 56^2", 1, 64, 64, 56, 3, 1));
    kernels.push_back(conv("conv 1x1 256->64 at 56^2", 1, 256, 64, 56, 1, 1));
    kernels.push_back(conv("depthwise 3x3 32 at 112^2", 1, 32, 32, 112, 3, 32));
    // A small network's late layers: maps narrower than a micro-tile or two.
    kernels.push_back(conv("conv 3x3 32->32 at 28^2 (x3)", 3, 32, 32, 28, 3, 1));
    kernels.push_back(conv("conv 3x3 128->128 at 7^2 (x3)", 3, 128, 128, 7, 3, 1));
    kernels.push_back(conv_transpose(1, 64, 32, 56));
    kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                                 [&](const Kernel &kn) { return kn.name.find(filter) == std::string::npos; }),
                  kernels.end());

    const int blocks = quick ? 5 : 9;
    std::ostringstream md;
    double peak1 = peak_gflops(1), peak2 = peak_gflops(2);
    md << "Measured FMA peak: " << static_cast<int>(peak1) << " GFLOP/s at 1 thread, " << static_cast<int>(peak2)
       << " at 2.\n\n";
    md << "| kernel | threads | disco GFLOP/s | oneDNN GFLOP/s | disco / oneDNN | disco / peak |\n";
    md << "|---|---|---|---|---|---|\n";
    std::printf("%s", md.str().c_str());
    std::fflush(stdout);
    // Graphs with the same key compile once per backend list; M varies at run time.
    std::string last_graph;
    CompiledModel keep_h, keep_o;
    std::unique_ptr<Executor> host, lib;
    for (const auto &kn : kernels) {
      if (kn.graph_key != last_graph) {
        host = compiled(kn.graph, {"host"}, &keep_h);
        lib = compiled(kn.graph, {"onednn", "host"}, &keep_o);
        last_graph = kn.graph_key;
      }
      for (int threads : {1, 2}) {
        host->set_num_threads(threads);
        lib->set_num_threads(threads);
        auto t = interleaved({host.get(), lib.get()}, kn.inputs, blocks);
        const double gh = kn.flops / t[0] / 1e9, go = kn.flops / t[1] / 1e9;
        char line[256];
        std::snprintf(line, sizeof line, "| %s | %d | %.1f | %.1f | %.2f | %.2f |\n", kn.name.c_str(), threads, gh, go,
                      gh / go, gh / (threads == 1 ? peak1 : peak2));
        std::printf("%s", line);
        std::fflush(stdout);
        md << line;
      }
    }
    if (!out_path.empty()) std::ofstream(out_path) << md.str();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kernels_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
