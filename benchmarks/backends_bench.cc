// Backends side by side: each model at each shape, with the host backend alone
// and with a library backend in front of it (default: onednn,host), at 1 and 2
// threads. Google Benchmark times each setting (median of --benchmark_repetitions
// runs after a warm-up); a table of medians and ratios goes to stdout and to
// --table FILE (markdown).
//
//   backends_bench [--models DIR] [--table FILE] [--targets onednn,host] [benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <sys/stat.h>

#include "frontend/random_tensor.h"
#include "driver/session.h"

namespace {

struct Case {
  std::string model;
  std::vector<int64_t> shape;
};

// The sweep of issue #4: the GEMM-heavy models where a library backend matters.
const std::vector<Case> kCases = {
    {"mlp", {1, 256}},           {"mlp", {16, 256}},          {"mlp", {256, 256}},
    {"bert_layer", {1, 32, 768}}, {"bert_layer", {1, 128, 768}}, {"bert_layer", {4, 128, 768}},
};

std::string shape_text(const std::vector<int64_t> &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

std::map<std::string, std::unique_ptr<disco::Session>> &sessions() {
  static std::map<std::string, std::unique_ptr<disco::Session>> s;
  return s;
}

disco::Session &session(const std::string &path, const std::string &targets) {
  auto &s = sessions()[path + "|" + targets];
  if (!s) {
    disco::CompileOptions opts;
    opts.backends.clear();
    std::stringstream ss(targets);
    for (std::string b; std::getline(ss, b, ',');) opts.backends.push_back(b);
    s = std::make_unique<disco::Session>(disco::Session::from_onnx(path, opts));
  }
  return *s;
}

struct Row {
  std::map<std::string, double> ms;  // setting -> median milliseconds
};

// Keeps the console output and collects each benchmark's median.
class MedianCollector : public benchmark::ConsoleReporter {
 public:
  MedianCollector() : ConsoleReporter(OO_Tabular) {}  // no colour codes: the output goes to logs
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const auto &r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        medians[r.run_name.function_name] = r.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> medians;  // in the benchmark's unit (ms)
};

bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

}  // namespace

int main(int argc, char **argv) {
  std::string models = std::string(DISCO_SOURCE_DIR) + "/../shared/models", table, library = "onednn,host";
  std::vector<char *> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") {
      std::puts("usage: backends_bench [--models DIR] [--table FILE] [--targets B,host] [Google Benchmark flags]\n"
                "Times mlp and bert_layer with the host backend alone and with the given backends,\n"
                "at 1 and 2 threads; prints medians and ratios (and writes them to FILE as markdown).");
      return 0;
    }
    if ((a == "--models" || a == "--table" || a == "--targets") && i + 1 < argc) {
      (a == "--models" ? models : a == "--table" ? table : library) = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  int bargc = static_cast<int>(rest.size());
  benchmark::Initialize(&bargc, rest.data());
  const std::vector<std::string> settings = {"host", library};
  std::vector<std::string> names;
  for (const auto &c : kCases) {
    const std::string path = models + "/" + c.model + ".onnx";
    if (!exists(path)) {
      std::fprintf(stderr, "backends_bench: %s not found; skipping %s\n", path.c_str(), c.model.c_str());
      continue;
    }
    for (int threads : {1, 2})
      for (const auto &setting : settings) {
        const std::string name = c.model + "/" + shape_text(c.shape) + "/t" + std::to_string(threads) + "/" + setting;
        names.push_back(name);
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State &state) {
          try {
            disco::Session &s = session(path, setting);
            s.set_num_threads(threads);
            std::vector<disco::TensorData> in{disco::random_tensor(disco::DType::F32, c.shape, 7)};
            for (int w = 0; w < 2; ++w) s.run(in);  // warm-up: buffers, primitives
            for (auto _ : state) benchmark::DoNotOptimize(s.run(in));
          } catch (const std::exception &e) {
            state.SkipWithError(e.what());
          }
        })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(1)
            ->Repetitions(20)
            ->ReportAggregatesOnly(true);
      }
  }
  MedianCollector reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::ostringstream md;
  md << "| model | shape | threads | host ms | " << library << " ms | ratio (" << library << " / host) |\n";
  md << "|---|---|---|---|---|---|\n";
  for (const auto &c : kCases)
    for (int threads : {1, 2}) {
      const std::string base = c.model + "/" + shape_text(c.shape) + "/t" + std::to_string(threads) + "/";
      auto h = reporter.medians.find(base + "host"), l = reporter.medians.find(base + library);
      if (h == reporter.medians.end() || l == reporter.medians.end()) continue;
      char line[256];
      std::snprintf(line, sizeof line, "| %s | %s | %d | %.3f | %.3f | %.3f |\n", c.model.c_str(),
                    shape_text(c.shape).c_str(), threads, h->second, l->second, l->second / h->second);
      md << line;
    }
  std::fputs(("\n" + md.str()).c_str(), stdout);
  if (!table.empty()) {
    std::ofstream f(table);
    f << md.str();
  }
  benchmark::Shutdown();
  return 0;
}
