// The CPU benchmark harness: disco (dynamic compile), disco (static compile
// per shape) and ONNX Runtime, side by side in one run, interleaved (disco
// and ONNX Runtime block by block, disco's two compiles within its blocks in
// short alternating sub-blocks) so that machine noise hits all three alike. Also a STREAM-style copy
// for the machine's memory bandwidth. Prints a markdown table (and writes it
// with --out). benchmarks/run.sh installs the peer and calls this.
// With --sweep FILE the models and shapes come from a file instead
// (benchmarks/make_zoo.py writes one; benchmarks/zoo_sweep.sh runs it), each
// shape's outputs optionally checked against references first (--check).
// disco's OpenMP threads spin briefly here, as in the disco CLI:
// tools/openmp_short_spin.cc, linked into this program, sets that up before main.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "benchmarks/cpu_pinning.h"
#include "frontend/errors.h"
#include "frontend/random_tensor.h"
#include "frontend/tensor_compare.h"
#include "driver/session.h"
#include "runtime/npy.h"
#include "tools/cli_args.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Sweep {
  std::string model;
  std::vector<std::vector<int64_t>> shapes;
  double min_bytes_per_element = 0;  // memory-bound models: bytes moved per input element, at least
};

// One shape of a model, the unit the table's rows come in: the built-in sweep
// gives the first input's shape (random data), a sweep file each input's data
// and the references its outputs are checked against.
struct CellInput {
  std::string name;  // empty: the model's first input
  std::vector<int64_t> shape;
  std::optional<disco::TensorData> data;  // empty: random data of the input's dtype
};
struct Cell {
  std::vector<CellInput> inputs;
  std::vector<std::pair<std::string, disco::TensorData>> expects;  // output name, reference
  double rtol = 1e-3, atol = 1e-4;
};
struct ModelCells {
  std::string model, path;
  std::vector<Cell> cells;
  double min_bytes_per_element = 0;
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
// that a few slow blocks move its median less. Cheap: runs under 20 ms. Up to
// 2 ms only, a 3-5 ms cell of the zoo sweep (--runs 10) got two blocks a side,
// and one slow block moved its ratio by a third between two sweeps of one
// build (shufflenet_v2 at 1x3x224x224, one thread: 0.75 and 1.15,
// zoo-2026-12-04-e and -f; mobilenet_v3_large 0.76 and 1.23).
constexpr double kCheapRunMs = 20;
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

// "1x3x224x224" for one input, "x=2x77x768 mask=2x77" for several.
std::string cell_shape_text(const Cell &c) {
  if (c.inputs.size() == 1) return shape_text(c.inputs[0].shape);
  std::string out;
  for (const auto &in : c.inputs) out += (out.empty() ? "" : " ") + in.name + "=" + shape_text(in.shape);
  return out;
}

std::vector<ModelCells> builtin_cells(const std::string &models) {
  std::vector<ModelCells> all;
  for (const auto &sw : kSweep) {
    ModelCells m{sw.model, models + "/" + sw.model + ".onnx", {}, sw.min_bytes_per_element};
    for (const auto &shape : sw.shapes) m.cells.push_back(Cell{{CellInput{"", shape, std::nullopt}}, {}});
    all.push_back(std::move(m));
  }
  return all;
}

// A sweep file (benchmarks/make_zoo.py writes one): a line per shape,
//   NAME MODEL [--input IN=FILE.npy | --shape IN=2x3x224x224]... [--expect OUT=FILE.npy]... [--rtol X] [--atol X]
// with `disco run`'s options, paths relative to the file's folder; '#' starts a
// comment. Consecutive lines of one NAME and MODEL share one compile.
std::vector<ModelCells> read_sweep_file(const std::string &path) {
  std::ifstream f(path);
  DISCO_CHECK(f.good(), "cannot read sweep file '", path, "'");
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  auto resolve = [&](const std::string &p) { return p.empty() || p[0] == '/' ? p : dir + "/" + p; };
  std::vector<ModelCells> all;
  int line_no = 0;
  for (std::string line; std::getline(f, line);) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::vector<std::string> words;
    std::istringstream ws(line);
    for (std::string w; ws >> w;) words.push_back(w);
    if (words.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    std::vector<char *> argv;
    for (auto &w : words) argv.push_back(w.data());
    try {
      const disco::CliArgs a(static_cast<int>(argv.size()), argv.data(), 0, {},
                             {"input", "shape", "expect", "rtol", "atol"});
      if (a.positional().size() != 2) throw disco::UsageError("expected NAME MODEL, then options");
      Cell cell;
      for (const auto &text : a.all("input")) {
        auto [name, file] = disco::split_assignment(text, "input");
        disco::TensorData t = disco::read_npy(resolve(file));
        cell.inputs.push_back(CellInput{name, t.shape, std::move(t)});
      }
      for (const auto &text : a.all("shape")) {
        auto [name, shape] = disco::split_assignment(text, "shape");
        cell.inputs.push_back(CellInput{name, disco::parse_shape(shape), std::nullopt});
      }
      if (cell.inputs.empty()) throw disco::UsageError("no --input or --shape");
      for (const auto &text : a.all("expect")) {
        auto [name, file] = disco::split_assignment(text, "expect");
        cell.expects.emplace_back(name, disco::read_npy(resolve(file)));
      }
      cell.rtol = a.get_double("rtol", cell.rtol);
      cell.atol = a.get_double("atol", cell.atol);
      const std::string &name = a.positional()[0], model = resolve(a.positional()[1]);
      if (all.empty() || all.back().model != name || all.back().path != model)
        all.push_back(ModelCells{name, model, {}, 0});
      all.back().cells.push_back(std::move(cell));
    } catch (const std::exception &e) {  // a usage error, or a .npy file missing or unreadable
      throw disco::UsageError(where + e.what());
    }
  }
  return all;
}

// The session's inputs for one cell, in the model's order.
std::vector<disco::TensorData> cell_inputs(const disco::Session &s, const Cell &c) {
  std::vector<disco::TensorData> in;
  for (const auto &spec : s.inputs()) {
    auto it = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const CellInput &ci) {
      return ci.name == spec.name || (ci.name.empty() && &spec == &s.inputs()[0]);
    });
    DISCO_CHECK(it != c.inputs.end(), "no data or shape for input '", spec.name, "'");
    in.push_back(it->data ? *it->data : disco::random_tensor(spec.dtype, it->shape, 7));
  }
  return in;
}

// Each reference against the session's output of that name: "pass" (with the
// worst error as a share of the tolerance) or "FAIL" and by how much.
std::string check_outputs(const disco::Session &s, const std::vector<disco::TensorData> &outs, const Cell &c) {
  double worst = 0;
  for (const auto &[name, ref] : c.expects) {
    const auto &names = s.output_names();
    const size_t i = std::find(names.begin(), names.end(), name) - names.begin();
    DISCO_CHECK(i < outs.size(), "the model has no output '", name, "'");
    char b[200];
    if (outs[i].shape != ref.shape) {
      std::snprintf(b, sizeof b, "FAIL %s: shape %s, reference %s", name.c_str(), shape_text(outs[i].shape).c_str(),
                    shape_text(ref.shape).c_str());
      return b;
    }
    const disco::Closeness cl = disco::closeness(outs[i], ref, c.rtol, c.atol);
    if (cl.worst > 1) {
      std::snprintf(b, sizeof b, "FAIL %s: max abs error %.2g, %.3g x the tolerance", name.c_str(), cl.max_abs,
                    cl.worst);
      return b;
    }
    worst = std::max(worst, cl.worst);
  }
  char b[64];
  std::snprintf(b, sizeof b, "pass (%.2g of tol)", worst);
  return c.expects.empty() ? "-" : b;
}

// Table cells hold no newlines or pipes.
std::string table_text(std::string s) {
  for (char &ch : s)
    if (ch == '\n' || ch == '|') ch = ' ';
  return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

// Each input's name and shape, for ONNX Runtime (random float32 data on its side).
using OrtInputs = std::vector<std::pair<std::string, std::vector<int64_t>>>;

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
  pid_t pid() const { return pid_; }
  ~OrtPeer() {
    fclose(in_);
    fclose(out_);
    waitpid(pid_, nullptr, 0);
  }
  // Times `runs` runs after `warmup`; throws with the peer's message on error.
  std::vector<double> time(const std::string &model, const OrtInputs &inputs, int threads, int runs, int warmup) {
    std::string req = "{\"model\":\"" + model + "\",\"inputs\":{";
    for (size_t k = 0; k < inputs.size(); ++k) {
      req += (k ? ",\"" : "\"") + inputs[k].first + "\":[";
      const auto &shape = inputs[k].second;
      for (size_t i = 0; i < shape.size(); ++i) req += (i ? "," : "") + std::to_string(shape[i]);
      req += "]";
    }
    req += "},\"threads\":" + std::to_string(threads) + ",\"runs\":" + std::to_string(runs) +
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

// Sweep files: a disco run longer than this is timed once, beside a few ONNX
// Runtime runs (a kernel left on the generic schedule, e.g. an LSTM's, can
// take minutes a run, and the sweep would take hours).
constexpr double kTimeOnceAboveMs = 2000;
// Issue #21: no cell's disco / ORT above this.
constexpr double kCellLimit = 1.15;

std::string fmt(const char *format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

// The labels of a compile's kernels on the generic schedule, from its progress lines.
class GenericKernels {
 public:
  void operator()(const std::string &line) {
    if (line.rfind("kernel ", 0) == 0) {
      const size_t open = line.find('(');
      kernel_ = open == std::string::npos ? line : line.substr(open + 1, line.size() - open - 2);
    } else if (line.find("schedule generic") != std::string::npos) {
      labels_.push_back(kernel_);
    }
  }
  const std::vector<std::string> &labels() const { return labels_; }

 private:
  std::string kernel_;
  std::vector<std::string> labels_;
};

// The sweep file's notes on a model: what runs outside the fast paths.
std::string slow_path_notes(const disco::CompiledModel &c, const std::vector<std::string> &generic) {
  std::vector<std::string> host_ops;
  for (const auto &step : c.plan.steps)
    if (!step.host_op.empty()) host_ops.push_back(step.label);
  std::string notes;
  auto list = [&](const char *what, const std::vector<std::string> &labels) {
    if (labels.empty()) return;
    notes += std::string(notes.empty() ? "" : "; ") + what + " (" + std::to_string(labels.size()) + "): ";
    for (size_t i = 0; i < labels.size() && i < 3; ++i) notes += (i ? ", " : "") + labels[i];
    if (labels.size() > 3) notes += ", ...";
  };
  list("generic schedule", generic);
  list("host ops", host_ops);
  return notes;
}

// Runs `fn` with oneDNN's verbose lines on (they go to stdout, here to a
// temporary file) and returns the primitives it executed on oneDNN's
// reference code ("matmul ref:any"), with how many times each ran.
std::map<std::string, int> onednn_reference_calls(const std::function<void()> &fn) {
  std::fflush(stdout);
  FILE *log = std::tmpfile();
  DISCO_CHECK(log, "cannot make a temporary file");
  const int saved = dup(1);
  dup2(fileno(log), 1);
  auto restore = [&] {
    dnnl_set_verbose(0);
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved);
  };
  dnnl_set_verbose(1);
  try {
    fn();
  } catch (...) {
    restore();
    std::fclose(log);
    throw;
  }
  restore();
  std::rewind(log);
  std::map<std::string, int> calls;
  char line[4096];
  while (std::fgets(line, sizeof line, log)) {
    // onednn_verbose,exec,cpu,KIND,IMPLEMENTATION,...
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; fields.size() < 5 && std::getline(ss, f, ',');) fields.push_back(f);
    if (fields.size() == 5 && fields[1] == "exec" && fields[4].find("ref") != std::string::npos)
      ++calls[fields[3] + " " + fields[4]];
  }
  std::fclose(log);
  return calls;
}

// One cell at one thread count: all runs of each side.
struct CellTimes {
  std::vector<double> dynamic, fixed, ort;
  std::vector<double> pair_speed;  // static ms / dynamic ms, sub-block pair by sub-block pair
  std::vector<double> copy_gbps;   // memory-bound models: the copy beside this cell, block by block
  bool timed_once = false;
};

// Times disco's dynamic compile (and `fixed`, the static one, unless null) and
// ONNX Runtime on one cell, interleaved; the dynamic compile has run once
// already (`first_ms`, into `dynamic_out`). `copy`: a memory-bound model's
// copy to time beside it; `time_once_above_ms`: when the first two dynamic
// runs take that long, the second is the time (0: never).
CellTimes time_cell(disco::Session &dynamic, disco::Session *fixed, const std::vector<disco::TensorData> &in,
                    std::vector<disco::TensorData> &dynamic_out, double first_ms, OrtPeer &ort, const std::string &path,
                    const OrtInputs &ort_inputs, int threads, int runs, StreamCopy *copy, double time_once_above_ms) {
  CellTimes t;
  std::vector<disco::TensorData> fixed_out;
  if (fixed) run_ms(*fixed, in, fixed_out);
  for (int w = 1; w < 3; ++w) {
    // The first run pays for more than the later ones (600 ms more for
    // resnet50 here), so the second decides whether to time only once.
    const double ms = run_ms(dynamic, in, dynamic_out);
    const double fixed_ms = fixed ? run_ms(*fixed, in, fixed_out) : 0;
    if (w == 1 && time_once_above_ms > 0 && first_ms > time_once_above_ms && ms > time_once_above_ms) {
      t.timed_once = true;
      t.dynamic.push_back(ms);
      if (fixed) {
        t.fixed.push_back(fixed_ms);
        t.pair_speed.push_back(fixed_ms / ms);
      }
      t.ort = ort.time(path, ort_inputs, threads, kBlock, 1);
      return t;
    }
  }
  ort.time(path, ort_inputs, threads, 1, 3);
  // disco's warm-up per block, in runs of each compile: enough for kWarmupMs
  // of the faster; its sub-blocks, about kSubBlockMs of the slower.
  const double dynamic_ms = run_ms(dynamic, in, dynamic_out);
  const double fixed_ms = fixed ? run_ms(*fixed, in, fixed_out) : dynamic_ms;
  const int disco_warmup = warmup_runs(std::min(dynamic_ms, fixed_ms));
  const double slower_ms = std::max(dynamic_ms, fixed_ms);
  const double ort_ms = median(ort.time(path, ort_inputs, threads, 3, 0));
  const int ort_warmup = warmup_runs(ort_ms);
  const int cell_runs = ort_ms < kCheapRunMs ? runs * kCheapCellRunsFactor : runs;
  const int sub_runs = std::max(1, static_cast<int>(std::ceil(kSubBlockMs / std::max(slower_ms, 1e-3))));
  // Without a static compile nothing alternates, and no run follows a switch.
  const int switch_warmup = fixed && slower_ms < kSwitchWarmupBelowMs ? 1 : 0;
  const int sides = fixed ? 2 : 1;
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
          if (fixed) run_ms(*fixed, in, fixed_out);
        }
        for (int pair = 0; pair < n; ++pair) {
          double sub_median[2] = {0, 0};  // dynamic, static
          for (int half = 0; half < sides; ++half) {
            // Which goes first alternates too.
            const int side = (block + pair + half) % sides;
            disco::Session &session = side == 0 ? dynamic : *fixed;
            std::vector<disco::TensorData> &outs = side == 0 ? dynamic_out : fixed_out;
            for (int r = 0; r < switch_warmup; ++r) run_ms(session, in, outs);
            std::vector<double> sub;
            for (int r = 0; r < sub_runs; ++r) sub.push_back(run_ms(session, in, outs));
            sub_median[side] = median(sub);
            std::vector<double> &all = side == 0 ? t.dynamic : t.fixed;
            all.insert(all.end(), sub.begin(), sub.end());
          }
          if (fixed) t.pair_speed.push_back(sub_median[1] / sub_median[0]);
        }
      } else {
        for (double ms : ort.time(path, ort_inputs, threads, n, ort_warmup)) t.ort.push_back(ms);
      }
      settle();
    }
    // The machine's speed drifts over minutes here, so a memory-bound
    // model's share is taken against the copy measured beside it.
    if (copy) {
      for (auto t0 = Clock::now(); std::chrono::duration<double, std::milli>(Clock::now() - t0).count() < kWarmupMs;)
        copy->gbps(threads);
      for (int r = 0; r < n; ++r) t.copy_gbps.push_back(copy->gbps(threads));
      settle();
    }
  }
  return t;
}

const char *kHelp =
    "usage: harness [--models DIR] [--peer ort_peer.js] [--node node] [--runs N] [--threads 1,2]\n"
    "               [--only MODEL]... [--targets B,host] [--out FILE] [--sweep FILE [--check]] [--skip-static]\n"
    "               [--no-pin]\n"
    "Times each model of the sweep with disco (one dynamic compile), disco (a static compile\n"
    "per shape) and ONNX Runtime (all graph optimizations), interleaved, at each thread\n"
    "count set explicitly on both sides; medians of N runs (default 40; four times as many\n"
    "for cells under 20 ms) after warm-up. disco's two compiles alternate in sub-blocks of\n"
    "about 2 ms, and their speed ratio is taken pair by pair.\n"
    "  --sweep FILE    the models and shapes of FILE (benchmarks/make_zoo.py's zoo.txt) instead of\n"
    "                  the built-in sweep; a model that does not compile or a cell that fails gets a\n"
    "                  row with the error and the sweep goes on; disco runs over 2 s are timed once;\n"
    "                  the table ends with the geometric mean of disco / ORT per thread count\n"
    "  --check         (with --sweep) check each cell's first run against the file's references\n"
    "  --skip-static   no static compile, and no static columns\n"
    "  --only MODEL    this model only; repeat it (or MODEL,MODEL) for several\n"
    "  --no-pin        leave the CPUs to the scheduler; by default a cell with fewer threads than\n"
    "                  CPUs runs with the harness and ONNX Runtime pinned to the same, last CPUs\n";

}  // namespace

int main(int argc, char **argv) {
  try {
    std::string models = std::string(DISCO_SOURCE_DIR) + "/../shared/models";
    std::string peer = std::string(DISCO_SOURCE_DIR) + "/benchmarks/peers/ort_peer.js", node = "node", out,
                targets = "onednn,host";
    int runs = 40;
    std::vector<int> thread_counts = {1, 2};
    const disco::CliArgs args(argc, argv, 1, {"help", "check", "skip-static", "no-pin"},
                              {"models", "peer", "node", "out", "only", "targets", "runs", "threads", "sweep"});
    if (args.flag("help")) {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (!args.positional().empty()) throw disco::UsageError("unexpected argument '" + args.positional()[0] + "'");
    models = args.get("models", models);
    peer = args.get("peer", peer);
    node = args.get("node", node);
    out = args.get("out", out);
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
    std::set<std::string> only;
    for (const auto &text : args.all("only")) {
      std::stringstream ss(text);
      for (std::string name; std::getline(ss, name, ',');) only.insert(name);
    }
    const std::string sweep_path = args.get("sweep", "");
    const bool sweep_file = !sweep_path.empty(), check = args.flag("check"), skip_static = args.flag("skip-static");
    if (check && !sweep_file) throw disco::UsageError("--check needs --sweep FILE (its references)");
    const std::vector<ModelCells> sweep = sweep_file ? read_sweep_file(sweep_path) : builtin_cells(models);
    const disco::bench::CpuPinning pinning(!args.flag("no-pin"));
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
       << "medians of " << runs << " runs (" << runs * kCheapCellRunsFactor << " where ONNX Runtime takes under "
       << kCheapRunMs << " ms), interleaved in blocks of " << kBlock << " taking turns, each block after at least "
       << kWarmupMs << " ms (and one run) of untimed warm-up and a 50 ms pause; ";
    for (int t : thread_counts)
      if (const std::string cpus = pinning.cpus_for(t); !cpus.empty())
        md << t << "-thread cells run with the harness and ONNX Runtime both pinned to CPU(s) " << cpus << " of "
           << pinning.cpu_count() << "; ";
    if (skip_static)
      md << "no static compile. Times are medians of all runs.";
    else
      md << "within disco's blocks the dynamic and static compiles alternate in sub-blocks of about " << kSubBlockMs
         << " ms (at least one run, each after one untimed run unless a run takes " << kSwitchWarmupBelowMs
         << " ms or more). "
         << "Times are medians of all runs; dynamic / static speed is the median over sub-block pairs of the static "
            "sub-block's median over the dynamic one's.";
    if (sweep_file)
      md << " Models and shapes from `" << sweep_path << "`; where disco's first two runs take over "
         << kTimeOnceAboveMs / 1000 << " s each, the second is its time, beside " << kBlock << " ONNX Runtime runs."
         << (check ? " check: the cell's first disco run against PyTorch's output (|disco - ref| <= atol + rtol |ref|, "
                     "rtol 1e-3 and atol 1e-4 unless the file says otherwise), the worst element's share of that bound."
                   : "");
    md << "\n\n";
    std::vector<std::string> columns = {"model", "shape", "threads", "disco dynamic ms"};
    if (!skip_static) columns.push_back("disco static ms");
    columns.insert(columns.end(), {"ONNX Runtime ms", "dynamic / ORT"});
    if (!skip_static) columns.push_back("dynamic speed / static speed");
    if (check) columns.push_back("check");
    columns.insert(columns.end(), {"kernels", "cold compile s (dynamic)", "notes"});
    md << "|";
    for (const auto &c : columns) md << " " << c << " |";
    md << "\n|";
    for (size_t i = 0; i < columns.size(); ++i) md << "---|";
    md << "\n";
    std::fputs(md.str().c_str(), stdout);
    std::fflush(stdout);
    auto emit = [&](const std::vector<std::string> &cells) {
      std::string line = "|";
      for (const auto &c : cells) line += " " + c + " |";
      line += "\n";
      md << line;
      std::fputs(line.c_str(), stdout);
      std::fflush(stdout);
    };
    // A row of dashes with the error in the notes (sweep files only; the built-in sweep stops).
    int errors = 0;
    auto error_row = [&](const std::string &model, const std::string &shape, const std::string &threads,
                         const std::string &message) {
      std::vector<std::string> cells(columns.size(), "-");
      cells[0] = model;
      cells[1] = shape;
      cells[2] = threads;
      cells.back() = table_text(message);
      emit(cells);
      ++errors;
    };

    OrtPeer ort(node, peer);
    std::map<int, std::vector<double>> ratios;  // disco / ORT, by thread count
    int checks_failed = 0;
    for (const auto &m : sweep) {
      if (!only.empty() && !only.count(m.model)) continue;
      if (!exists(m.path)) {
        if (sweep_file)
          error_row(m.model, "-", "-", m.path + " not found");
        else
          std::fprintf(stderr, "harness: %s not found; skipping\n", m.path.c_str());
        continue;
      }
      disco::CompileOptions cold = base;
      cold.use_cache = false;  // the table's compile time is a cold compile's
      GenericKernels generic;
      if (sweep_file) cold.progress = [&](const std::string &line) { generic(line); };
      std::optional<disco::Session> compiled;
      try {
        compiled.emplace(disco::Session::from_onnx(m.path, cold));
      } catch (const std::exception &e) {
        if (!sweep_file) throw;
        error_row(m.model, "-", "-", std::string("disco could not compile it: ") + e.what());
        continue;
      }
      disco::Session &dynamic = *compiled;
      const double compile_s = dynamic.last_compile().seconds;
      const std::string model_notes = sweep_file ? slow_path_notes(dynamic.last_compile(), generic.labels()) : "";
      for (const auto &cell : m.cells) {
        const std::string shape = cell_shape_text(cell);
        std::vector<disco::TensorData> in;
        OrtInputs ort_inputs;
        std::optional<disco::Session> fixed;
        try {
          in = cell_inputs(dynamic, cell);
          disco::CompileOptions st = base;
          for (size_t i = 0; i < in.size(); ++i) {
            ort_inputs.emplace_back(dynamic.inputs()[i].name, in[i].shape);
            st.static_shapes[dynamic.inputs()[i].name] = in[i].shape;
          }
          if (!skip_static) fixed.emplace(disco::Session::from_onnx(m.path, st));
        } catch (const std::exception &e) {
          if (!sweep_file) throw;
          error_row(m.model, shape, "-", e.what());
          continue;
        }
        for (int threads : thread_counts) {
          try {
            pinning.apply(threads, {ort.pid()});
            dynamic.set_num_threads(threads);
            if (fixed) fixed->set_num_threads(threads);
            std::vector<disco::TensorData> dynamic_out;
            double first_ms = 0;
            std::string check_text = "-", notes, references;
            if (sweep_file) {
              for (const auto &[call, count] :
                   onednn_reference_calls([&] { first_ms = run_ms(dynamic, in, dynamic_out); }))
                references += (references.empty() ? "" : ", ") + call + " x" + std::to_string(count);
            } else {
              first_ms = run_ms(dynamic, in, dynamic_out);
            }
            if (check) {
              check_text = check_outputs(dynamic, dynamic_out, cell);
              checks_failed += check_text.rfind("FAIL", 0) == 0;
            }
            const CellTimes t = time_cell(dynamic, fixed ? &*fixed : nullptr, in, dynamic_out, first_ms, ort, m.path,
                                          ort_inputs, threads, runs, m.min_bytes_per_element > 0 ? &copy : nullptr,
                                          sweep_file ? kTimeOnceAboveMs : 0);
            if (t.timed_once) notes = "disco timed once (runs over " + fmt("%.0f", kTimeOnceAboveMs / 1000) + " s)";
            const double dm = median(t.dynamic), sm = median(t.fixed), om = median(t.ort);
            if (m.min_bytes_per_element > 0) {
              double elems = 1;
              for (auto x : cell.inputs[0].shape) elems *= static_cast<double>(x);
              // Medians on both sides, as for the times; the copy's best (STREAM's figure) too.
              const double gbps = m.min_bytes_per_element * elems / (dm * 1e-3) / 1e9;
              const double copy_median = median(t.copy_gbps);
              const double copy_best = *std::max_element(t.copy_gbps.begin(), t.copy_gbps.end());
              char b[160];
              std::snprintf(b, sizeof b,
                            "%.1f GB/s = %.0f%% of the copy's median %.1f GB/s beside it (%.0f%% of its best, %.1f)",
                            gbps, 100 * gbps / copy_median, copy_median, 100 * gbps / copy_best, copy_best);
              notes = b;
            }
            if (!references.empty()) notes += (notes.empty() ? "" : "; ") + ("oneDNN reference code: " + references);
            if (!model_notes.empty()) notes += (notes.empty() ? "" : "; ") + model_notes;
            std::vector<std::string> cells = {m.model, shape, std::to_string(threads), fmt("%.3f", dm)};
            if (fixed) cells.push_back(fmt("%.3f", sm));
            cells.insert(cells.end(), {fmt("%.3f", om), fmt("%.2f", dm / om)});
            if (fixed) cells.push_back(fmt("%.2f", median(t.pair_speed)));
            if (check) cells.push_back(table_text(check_text));
            cells.insert(cells.end(), {std::to_string(dynamic.last_compile().plan.steps.size()), fmt("%.2f", compile_s),
                                       table_text(notes)});
            emit(cells);
            if (dm > 0 && om > 0) ratios[threads].push_back(dm / om);
          } catch (const std::exception &e) {
            if (!sweep_file) throw;
            error_row(m.model, shape, std::to_string(threads), e.what());
          }
        }
      }
    }
    if (sweep_file) {
      std::ostringstream summary;
      summary << "\nGeometric mean of disco / ORT:";
      int above = 0;
      for (int t : thread_counts) {
        double log_sum = 0;
        for (double r : ratios[t]) {
          log_sum += std::log(r);
          above += r > kCellLimit;
        }
        summary << " " << t << " thread(s) "
                << (ratios[t].empty() ? "-" : fmt("%.3f", std::exp(log_sum / ratios[t].size()))) << " ("
                << ratios[t].size() << " cells);";
      }
      summary << " cells above " << kCellLimit << ": " << above << ".";
      if (check) summary << " Checks failed: " << checks_failed << ".";
      summary << " Rows with errors: " << errors << ".\n";
      md << summary.str();
      std::fputs(summary.str().c_str(), stdout);
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
