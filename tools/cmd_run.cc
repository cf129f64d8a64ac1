// disco run: compile once, run one or more input sets, write and check outputs.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "frontend/checked_size.h"
#include "frontend/errors.h"
#include "frontend/random_tensor.h"
#include "frontend/tensor_compare.h"
#include "runtime/executor.h"
#include "runtime/npy.h"
#include "driver/session.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/compile_flags.h"
#include "tools/progress_display.h"
#include "tools/scalar_value.h"

namespace disco {

namespace {

const char *kRunHelp =
    "usage: disco run MODEL.onnx [options]\n"
    "\n"
    "Compiles MODEL once, with its symbolic dims, and runs it. Give an input more than\n"
    "once to run several input sets with the same compiled model.\n"
    "\n"
    "  --input NAME=FILE.npy   input data (float32, float16, float64, int8-64, uint8-64, bool)\n"
    "  --shape NAME=2x128x768  fill input NAME with deterministic random data of this shape ('scalar': rank 0)\n"
    "  --value NAME=V          a scalar input's value, in its dtype (e.g. --value rate=16000, --value mode=true)\n"
    "  --carry OUT=IN          after each run, output OUT is input IN of the next (an RNN's state): IN is\n"
    "                          given once, for the first run, and the other inputs once per run\n"
    "  --output-dir DIR        write DIR/<output>.npy (DIR/run<k>/<output>.npy for several runs)\n"
    "  --expect NAME=FILE.npy  compare output NAME with a reference; exit 1 if it differs\n"
    "  --rtol X, --atol X      tolerances for --expect (default 1e-4, 1e-5)\n"
    "  --repeat N              time N runs of each input set and print the median (default 1)\n"
    "  --threads N             worker threads (default: all cores)\n"
    "  --target T              host (default), opencl, cuda (cuda70/80/86) or a Halide target string\n"
    "  --targets B1,B2,...     backends in priority order (default: onednn,host); e.g. host alone\n"
    "  --static NAME=2x128x768 compile input NAME for this one shape only (a static compile)\n"
    "  --hint SYM=VALUE        a likely value of a symbolic dim (e.g. seq=128): kernels get a branch\n"
    "                          specialized for it, and keep the generic one\n"
    "  --calibrate FILE.npy    a calibration sample for vitis_ai (repeatable; INPUT=FILE.npy for several inputs)\n"
    "  --compile-jobs N        Halide kernels compiled at once (default: one per core)\n"
    "  --max-memory SIZE       the most one value (and the intermediate values together) may take, e.g. 8G;\n"
    "                          checked before anything is allocated (default: $DISCO_MAX_MEMORY, else the\n"
    "                          physical memory)\n"
    "  --no-cache              compile even if the compile cache has this model\n"
    "  --verbose               print compile progress, each compile phase's time, cache use and the compile count\n"
    "  --profile               print the time of each step (kernel or library call), summed over the runs\n";

void print_profile(std::vector<Executor::StepTime> steps) {
  double total = 0;
  for (const auto &s : steps) total += s.ms;
  std::stable_sort(steps.begin(), steps.end(), [](const auto &a, const auto &b) { return a.ms > b.ms; });
  std::printf("  profile (%zu steps, %.3f ms in steps):\n", steps.size(), total);
  for (const auto &s : steps) {
    std::string label = s.label.size() > 100 ? s.label.substr(0, 97) + "..." : s.label;
    std::printf("    %9.3f ms %5.1f%%  %s\n", s.ms, total > 0 ? 100 * s.ms / total : 0.0, label.c_str());
  }
}

std::string shape_text(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// Output names may hold '/' or ':' (exporters like "/fc/Gemm_output_0").
std::string file_name(const std::string &name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

void make_dir(const std::string &d) {
  if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) fail("cannot create directory '", d, "'");
}

}  // namespace

int cmd_run(int argc, char **argv) {
  CliArgs args(argc, argv, 2, {"help", "no-cache", "verbose", "profile"},
               {"input", "shape", "value", "carry", "output-dir", "expect", "rtol", "atol", "repeat", "threads", "target", "targets", "static", "hint", "calibrate", "compile-jobs", "max-memory"});
  if (args.flag("help")) {
    std::fputs(kRunHelp, stdout);
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("expected exactly one MODEL");
  const std::string model = args.positional()[0];
  const bool verbose = args.flag("verbose");
  const int repeat = args.get_int("repeat", 1);
  if (repeat < 1) throw UsageError("--repeat must be at least 1");
  const double rtol = args.get_double("rtol", 1e-4), atol = args.get_double("atol", 1e-5);

  // Input sets: the k-th occurrence of a name belongs to run k.
  enum class Source { File, Random, Value };
  std::map<std::string, std::vector<std::pair<Source, std::string>>> given;  // name -> (source, text)
  for (const auto &a : args.all("input")) {
    auto [n, v] = split_assignment(a, "input");
    given[n].push_back({Source::File, v});
  }
  for (const auto &a : args.all("shape")) {
    auto [n, v] = split_assignment(a, "shape");
    parse_shape(v, "--shape " + n);
    given[n].push_back({Source::Random, v});
  }
  for (const auto &a : args.all("value")) {
    auto [n, v] = split_assignment(a, "value");
    given[n].push_back({Source::Value, v});
  }
  std::vector<std::pair<std::string, std::string>> carries;  // (output, input)
  for (const auto &a : args.all("carry")) carries.push_back(split_assignment(a, "carry"));
  std::map<std::string, std::vector<std::string>> expects;
  for (const auto &a : args.all("expect")) {
    auto [n, v] = split_assignment(a, "expect");
    expects[n].push_back(v);
  }

  CompileOptions opts = compile_options_from(args);  // --target, --targets, --static, --hint, ... (shared with bench)
  // The kernel bar on a terminal (tools/progress_display.h); it outlives the
  // session, which may compile again at a run (value inputs).
  ProgressDisplay display;
  opts.kernel_progress = display.kernel_callback();
  if (verbose) opts.progress = [&display](const std::string &s) { display.line("  " + s); };
  const auto t_session = std::chrono::steady_clock::now();
  Session session = Session::from_onnx(model, opts);
  // The compile or cache lookup plus loading the kernels and constants: what a
  // warm start costs before the first run can begin.
  const double session_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_session).count();
  if (int t = args.get_int("threads", 0); t > 0) session.set_num_threads(t);
  auto report_compile = [&] {
    const CompiledModel &cm = session.last_compile();
    size_t kernels = 0;
    for (const PlanStep &st : cm.plan.steps) kernels += !st.kernel.empty();
    std::printf("compile: %.3f s (%zu steps, %zu Halide kernels%s)\n", cm.seconds, cm.plan.steps.size(), kernels,
                cm.cache_hit ? ", from the compile cache" : "");
    if (verbose) {
      std::printf("  compiles in this process: %d%s\n  cache: %s\n", compile_count(),
                  cm.cache_hit ? " (cache hit: nothing compiled)" : "", cm.dir.c_str());
      if (cm.cache_hit && !session.parsed())
        std::printf("  import: 0.000 s (not parsed: the file is unchanged since its compile)\n");
      else if (cm.cache_hit)
        std::printf("  import: %.3f s (parsing the model)\n", cm.profile.import_s);
      else std::printf("  compile profile:\n%s", cm.profile.describe("    ").c_str());
    }
  };
  if (session.value_inputs().empty()) {
    report_compile();
    if (verbose)
      std::printf("  session ready: %.3f s (import, compile or cache hit, kernels and constants loaded)\n", session_s);
  } else {
    std::string names;
    for (size_t i : session.value_inputs()) names += (names.empty() ? "'" : ", '") + session.inputs()[i].name + "'";
    std::printf("compile: at the first run, with the values of input %s compiled in\n", names.c_str());
  }
  struct {
    const std::vector<InputSpec> &inputs;
    const std::vector<std::string> &output_names;
  } plan{session.inputs(), session.output_names()};

  for (const auto &[n, v] : given) {
    const InputSpec *spec = nullptr;
    for (const auto &in : plan.inputs)
      if (in.name == n) spec = &in;
    if (!spec) fail("model has no input named '", n, "'");
    for (const auto &[source, text] : v)  // checked before any run
      if (source == Source::Value && !spec->shape.empty())
        throw UsageError("--value " + n + ": input '" + n + "' " + shape_str(spec->shape) +
                         " is not a scalar; use --input or --shape");
  }
  // Carried state: each OUT is an output and each IN an input, given once
  // (its first run's value) and carried by one --carry only.
  std::map<std::string, size_t> carried_from;  // input name -> output index
  for (const auto &[out, in] : carries) {
    auto oi = std::find(plan.output_names.begin(), plan.output_names.end(), out);
    if (oi == plan.output_names.end()) fail("--carry ", out, "=", in, ": model has no output named '", out, "'");
    bool known = false;
    for (const auto &spec : plan.inputs) known = known || spec.name == in;
    if (!known) fail("--carry ", out, "=", in, ": model has no input named '", in, "'");
    if (carried_from.count(in)) throw UsageError("--carry: input '" + in + "' is carried twice");
    auto g = given.find(in);
    if (g == given.end())
      throw UsageError("--carry " + out + "=" + in + ": give the first run's '" + in + "' with --input, --shape or --value");
    if (g->second.size() != 1)
      throw UsageError("--carry " + out + "=" + in + ": '" + in + "' is given " + std::to_string(g->second.size()) +
                       " times; give it once, for the first run (later runs take '" + out + "')");
    carried_from[in] = oi - plan.output_names.begin();
  }
  size_t runs = 1;
  for (const auto &[n, v] : given) runs = std::max(runs, v.size());
  for (const auto &[n, v] : given)
    if (v.size() != 1 && v.size() != runs)
      throw UsageError("input '" + n + "' is given " + std::to_string(v.size()) + " times, others " +
                       std::to_string(runs) + " times");
  for (const auto &[n, v] : expects) {
    bool known = std::find(plan.output_names.begin(), plan.output_names.end(), n) != plan.output_names.end();
    if (!known) fail("model has no output named '", n, "'");
    if (v.size() != 1 && v.size() != runs) throw UsageError("--expect for '" + n + "' does not match the run count");
  }

  const MemoryLimit limit = memory_limit(opts.max_memory);
  std::vector<std::vector<TensorData>> results;
  bool all_ok = true;
  for (size_t r = 0; r < runs; ++r) {
    std::vector<TensorData> inputs;
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      const InputSpec &spec = plan.inputs[i];
      auto it = given.find(spec.name);
      if (it == given.end())
        fail("input '", spec.name, "' ", shape_str(spec.shape), " is not given; use --input ", spec.name,
             "=FILE.npy, --shape ", spec.name, "=... or --value ", spec.name, "=V");
      if (auto c = carried_from.find(spec.name); c != carried_from.end() && r > 0) {
        inputs.push_back(results[r - 1][c->second]);  // shares the previous run's output, no copy
        continue;
      }
      const auto &[source, text] = it->second[it->second.size() == 1 ? 0 : r];
      // Checked against the memory limit before the data is read or made.
      if (source == Source::File) {
        inputs.push_back(read_npy(text, limit));
      } else if (source == Source::Value) {
        inputs.push_back(parse_scalar_value(text, spec.dtype, "--value " + spec.name));
      } else {
        const std::vector<int64_t> shape = parse_shape(text, "--shape " + spec.name);
        limit.check("input '" + spec.name + "'", shape, spec.dtype);
        // And a kernel's buffer limit, which the run checks too: before it, gigabytes of random data took 24 s.
        if (session.value_inputs().empty()) {
          const Plan &p = session.last_compile().plan;
          const int b = i < p.input_buffers.size() ? p.input_buffers[i] : -1;
          if (b >= 0 && kernel_buffers(p).at(static_cast<size_t>(b)))
            check_kernel_buffer_elements("input '" + spec.name + "'", shape);
        }
        inputs.push_back(random_tensor(spec.dtype, shape, 1234 + i));
      }
    }
    std::vector<double> times;
    std::vector<TensorData> outs;
    display.finish();  // before the run's lines (a first run may have compiled)
    session.set_profiling(false);
    for (int k = 0; k < repeat; ++k) {
      if (k == 1 || repeat == 1) session.set_profiling(args.flag("profile"));  // the first of several runs warms up
      auto t0 = std::chrono::steady_clock::now();
      session.run(inputs, outs);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    std::string desc;
    for (size_t i = 0; i < inputs.size(); ++i) desc += (i ? " " : "") + plan.inputs[i].name + shape_text(inputs[i].shape);
    desc += " ->";
    for (size_t i = 0; i < outs.size(); ++i) desc += " " + plan.output_names[i] + shape_text(outs[i].shape);
    std::printf("run %zu: %s  median %.3f ms over %d\n", r + 1, desc.c_str(), times[times.size() / 2], repeat);
    if (args.flag("profile")) print_profile(session.profile());
    if (verbose) {
      std::string syms;
      for (const auto &[s, v] : session.last_symbols()) syms += " " + s + "=" + std::to_string(v);
      std::printf("  symbols:%s\n", syms.c_str());
    }
    for (const auto &[n, files] : expects) {
      size_t oi = std::find(plan.output_names.begin(), plan.output_names.end(), n) - plan.output_names.begin();
      TensorData ref = read_npy(files[files.size() == 1 ? 0 : r]);
      bool ok = ref.shape == outs[oi].shape;
      Closeness close;
      if (ok) close = closeness(outs[oi], ref, rtol, atol);
      ok = ok && close.worst <= 1.0;
      const double max_abs = close.max_abs;
      all_ok = all_ok && ok;
      if (ref.shape != outs[oi].shape)
        std::printf("  check %s: FAIL, shape %s, reference %s\n", n.c_str(), shape_text(outs[oi].shape).c_str(),
                    shape_text(ref.shape).c_str());
      else
        std::printf("  check %s: %s (max abs error %.3g, rtol %g, atol %g)\n", n.c_str(), ok ? "ok" : "FAIL", max_abs,
                    rtol, atol);
    }
    results.push_back(std::move(outs));
  }
  // Outputs are written only once every run has succeeded.
  if (std::string dir = args.get("output-dir", ""); !dir.empty()) {
    make_dir(dir);
    for (size_t r = 0; r < results.size(); ++r) {
      std::string d = runs == 1 ? dir : dir + "/run" + std::to_string(r + 1);
      make_dir(d);
      for (size_t i = 0; i < results[r].size(); ++i) write_npy(d + "/" + file_name(plan.output_names[i]) + ".npy", results[r][i]);
    }
    std::printf("wrote outputs to %s\n", dir.c_str());
  }
  return all_ok ? 0 : 1;
}

}  // namespace disco
