// disco bench: compile once, then time repeated runs of one input set and
// print latency percentiles, throughput, the compile time and peak memory
// (compare onnxruntime_perf_test, trtexec, tvmc run --profile).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>

#include "driver/session.h"
#include "frontend/checked_size.h"
#include "frontend/errors.h"
#include "frontend/random_tensor.h"
#include "runtime/memory_plan.h"
#include "runtime/npy.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/compile_flags.h"
#include "tools/latency_stats.h"
#include "tools/progress_display.h"

namespace disco {

namespace {

const char *kBenchHelp =
    "usage: disco bench MODEL.onnx [options]\n"
    "\n"
    "Compiles MODEL once, with its symbolic dims, runs it untimed for --warmup seconds, then times\n"
    "runs for --seconds (at least 10 runs) on one input set, one run after another, and prints:\n"
    "  latency min, p50, p90, p99 and max in ms (percentiles interpolated linearly between ranks,\n"
    "  as numpy.percentile), throughput in inferences/s, the compile time (cold, or from the compile\n"
    "  cache), and peak memory (the process's peak resident set, VmHWM, which includes the compile,\n"
    "  and the planned arena of intermediate values at these shapes).\n"
    "\n"
    "  --input NAME=FILE.npy   input data (float32, float16, float64, int8-64, uint8-64, bool)\n"
    "  --shape NAME=2x3x224x224 fill input NAME with deterministic random data of this shape\n"
    "  --threads N             worker threads (default: all cores)\n"
    "  --warmup S              seconds of untimed runs first (default 1; 0: none)\n"
    "  --seconds S             seconds of timed runs (default 5; at least 10 runs are timed)\n"
    "  --verbose               print compile progress, cache use and the compile count\n";

constexpr size_t kMinTimedRuns = 10;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string shape_text(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// "1 step", "3 steps".
std::string count_text(size_t n, const std::string &noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// The process's peak resident set in bytes: VmHWM from /proc/self/status,
// else getrusage's ru_maxrss (KiB on Linux).
int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoll(line.c_str() + 6, nullptr, 10) * 1024;  // "VmHWM:  1234 kB"
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0) return static_cast<int64_t>(u.ru_maxrss) * 1024;
  return -1;
}

// The arena of intermediate values the executor plans for these symbols
// (runtime/executor.cc's plan_arena: the same lifetimes, sizes and
// placement). nullopt when a temp's size cannot be evaluated from them.
std::optional<int64_t> planned_arena_bytes(const Plan &plan, const SymbolValues &symbols) {
  const std::vector<BufferLifetime> lifetimes = temp_lifetimes(plan);
  std::vector<int64_t> bytes(plan.buffers.size(), 0);
  try {
    for (const BufferLifetime &l : lifetimes) {
      const PlanBuffer &b = plan.buffers[l.buffer];
      std::vector<int64_t> shape = eval_shape(b.shape, symbols);
      for (int64_t &d : shape) d = std::max<int64_t>(d, 0);
      const std::optional<int64_t> n = buffer_bytes(b, shape);
      if (!n) return std::nullopt;
      bytes[l.buffer] = *n;
    }
  } catch (const Error &) {
    return std::nullopt;
  }
  return place_buffers(lifetimes, bytes, plan.buffers.size()).size;
}

std::vector<TensorData> bench_inputs(const CliArgs &args, const std::vector<InputSpec> &specs, const MemoryLimit &limit) {
  std::map<std::string, std::pair<bool, std::string>> given;  // name -> (is_file, text)
  auto add = [&](const std::string &option, bool is_file) {
    for (const auto &a : args.all(option)) {
      auto [n, v] = split_assignment(a, option);
      if (!given.emplace(n, std::make_pair(is_file, v)).second)
        throw UsageError("input '" + n + "' is given more than once; bench times one input set");
    }
  };
  add("input", true);
  add("shape", false);
  for (const auto &[n, v] : given) {
    bool known = false;
    for (const auto &in : specs) known = known || in.name == n;
    if (!known) fail("model has no input named '", n, "'");
  }
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const InputSpec &spec = specs[i];
    auto it = given.find(spec.name);
    if (it == given.end())
      fail("input '", spec.name, "' ", shape_str(spec.shape), " is not given; use --input ", spec.name,
           "=FILE.npy or --shape ", spec.name, "=...");
    const auto &[is_file, text] = it->second;
    if (is_file) {
      inputs.push_back(read_npy(text, limit));
    } else {
      const std::vector<int64_t> shape = parse_shape(text, "--shape " + spec.name);
      limit.check("input '" + spec.name + "'", shape, spec.dtype);
      inputs.push_back(random_tensor(spec.dtype, shape, 1234 + i));  // the seeds disco run uses
    }
  }
  return inputs;
}

}  // namespace

int cmd_bench(int argc, char **argv) {
  std::set<std::string> flags = compile_flag_names(), options = compile_option_names();
  flags.insert({"help", "verbose"});
  options.insert({"input", "shape", "threads", "warmup", "seconds"});
  CliArgs args(argc, argv, 2, flags, options);
  if (args.flag("help")) {
    std::fputs(kBenchHelp, stdout);
    std::fputs(kCompileFlagsHelp, stdout);
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("expected exactly one MODEL");
  const double warmup_s = args.get_double("warmup", 1), timed_s = args.get_double("seconds", 5);
  if (!(warmup_s >= 0)) throw UsageError("--warmup must be 0 or more seconds");
  if (!(timed_s >= 0)) throw UsageError("--seconds must be 0 or more seconds");
  const int threads = args.get_int("threads", 0);
  if (threads < 0) throw UsageError("--threads must be 0 (all cores) or more");
  const bool verbose = args.flag("verbose");

  CompileOptions opts = compile_options_from(args);
  // Declared before the session, which keeps the callbacks for compiles at run time.
  ProgressDisplay display;
  opts.kernel_progress = display.kernel_callback();
  if (verbose) opts.progress = [&display](const std::string &s) { display.line("  " + s); };

  const auto t_session = std::chrono::steady_clock::now();
  Session session = Session::from_onnx(args.positional()[0], opts);
  const double session_s = seconds_since(t_session);
  if (threads > 0) session.set_num_threads(threads);
  std::vector<TensorData> inputs = bench_inputs(args, session.inputs(), memory_limit(opts.max_memory));

  std::vector<TensorData> outs;
  // Warm-up; a model that compiles with input values compiled in does so in its first run.
  const auto t_warm = std::chrono::steady_clock::now();
  size_t warm_runs = 0;
  while (warmup_s > 0 && (warm_runs == 0 || seconds_since(t_warm) < warmup_s)) {
    session.run(inputs, outs);
    ++warm_runs;
  }
  const double warm_s = seconds_since(t_warm);
  std::vector<double> times_ms;
  const auto t_timed = std::chrono::steady_clock::now();
  while (times_ms.size() < kMinTimedRuns || seconds_since(t_timed) < timed_s) {
    const auto t0 = std::chrono::steady_clock::now();
    session.run(inputs, outs);
    times_ms.push_back(1000 * seconds_since(t0));
  }
  const double wall_s = seconds_since(t_timed);
  display.finish();

  const CompiledModel &cm = session.last_compile();
  size_t kernels = 0;
  for (const PlanStep &st : cm.plan.steps) kernels += !st.kernel.empty();
  const std::string contents = count_text(cm.plan.steps.size(), "step") + ", " + count_text(kernels, "Halide kernel");
  std::string desc;
  for (size_t i = 0; i < inputs.size(); ++i) desc += (i ? " " : "") + session.inputs()[i].name + shape_text(inputs[i].shape);
  std::printf("model: %s  inputs: %s  threads: %s\n", args.positional()[0].c_str(), desc.c_str(),
              threads > 0 ? std::to_string(threads).c_str() : "all cores");
  if (!session.value_inputs().empty())
    std::printf("compile: %.3f s, %s, at the first run with input values compiled in (%s)\n", cm.seconds,
                cm.cache_hit ? "from the compile cache" : "cold", contents.c_str());
  else
    std::printf("compile: %.3f s, %s (%s; %.3f s to a ready session)\n", cm.seconds,
                cm.cache_hit ? "from the compile cache" : "cold", contents.c_str(), session_s);
  if (verbose) std::printf("  compiles in this process: %d\n  cache: %s\n", compile_count(), cm.dir.c_str());
  std::printf("warmup: %zu runs in %.2f s\n", warm_runs, warm_s);
  const LatencyStats st = latency_stats(times_ms);
  std::printf("latency (ms, %zu runs in %.2f s): min %.4f  p50 %.4f  p90 %.4f  p99 %.4f  max %.4f  mean %.4f\n", st.runs,
              wall_s, st.min, st.p50, st.p90, st.p99, st.max, st.mean);
  std::printf("throughput: %.2f inferences/s\n", wall_s > 0 ? static_cast<double>(st.runs) / wall_s : 0.0);
  const int64_t peak = peak_resident_bytes();
  const std::optional<int64_t> arena = planned_arena_bytes(cm.plan, session.last_symbols());
  std::printf("peak memory: %s resident (process peak, the compile included); planned arena %s\n",
              peak >= 0 ? bytes_text(peak).c_str() : "unknown",
              arena ? bytes_text(*arena).c_str() : "not planned (sizes known only during the run)");
  return 0;
}

}  // namespace disco
