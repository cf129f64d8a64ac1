// Runs one AOT library (linked alone: its .a, libc, pthread, dl) and checks it.
// Built once per model with DISCO_AOT_NAME (the library's symbol prefix) and
// DISCO_AOT_HEADER ("NAME.h").
//
//   harness names                          print the input names, one a line
//   harness check IN REF JITDIR [...]      run each input; compare the output
//                                          with PyTorch's (rtol 1e-4, atol 1e-5)
//                                          and with the one `disco run
//                                          --output-dir` wrote in JITDIR ('-': none)
//   harness check_l2 REL IN REF JITDIR [...]
//                                          for quantized regions (vitis_ai): the
//                                          output within REL relative L2 error of
//                                          PyTorch's float output, and bit-equal
//                                          to the one `disco run` wrote in JITDIR
//   harness zeros IN                       the output is all zeros (VART's dummy
//                                          runner ran the region: it writes nothing)
//   harness errors IN                      wrong rank, dim, dtype, output shape
//                                          and null host each return an error
//                                          naming the input or output and the dim;
//                                          Halide's errors are captured, no abort
//   harness concurrent THREADS ROUNDS IN REF [IN REF ...]
//                                          THREADS threads at once, each running
//                                          ROUNDS times, thread t's run r on pair
//                                          (t + r) % pairs (so that runs at
//                                          different shapes overlap); every
//                                          output compared with PyTorch's; thread
//                                          0 calls release_memory and thread 1
//                                          set_num_threads (1, 2) now and then
//   harness threads IN REF                 NAME_set_num_threads: returns the
//                                          previous count; with 1 thread every
//                                          parallel task runs on the calling
//                                          thread (seen through Halide's
//                                          do_par_for hook) and the output still
//                                          matches PyTorch's; n < 0 is refused
//   harness time IN RUNS [THREADS]         run IN RUNS times after a warm-up (at THREADS);
//                                          print the median milliseconds (for
//                                          benchmarks/, never a test)
//   harness bench IN WARMUP SECONDS THREADS
//                                          as `disco bench --warmup --seconds`:
//                                          untimed runs for WARMUP s, then timed
//                                          runs for SECONDS s (at least 10); print
//                                          the median milliseconds (benchmarks/)
//   harness throughput IN CALLERS RUNS     CALLERS threads at once, RUNS runs
//                                          each after a warm-up each: runs per
//                                          second of the whole (benchmarks/)
// Single-input, single-output float models (all the models of the test set).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include DISCO_AOT_HEADER
#include "halide_view.h"
#include "npy_lite.h"

// From the archive: Halide's runtime and the driver's shared message buffer.
extern "C" void halide_error(void *user_context, const char *msg);
typedef int (*halide_task_t)(void *user_context, int task_number, uint8_t *closure);
extern "C" char *disco_aot_halide_message(void);

#define DISCO_CAT2(a, b) a##b
#define DISCO_CAT(a, b) DISCO_CAT2(a, b)
#define FN(suffix) DISCO_CAT(DISCO_AOT_NAME, suffix)

namespace {

int g_failures = 0;
std::mutex g_failures_mu;  // the concurrent mode's threads report here

void failure(const std::string &what) {
  std::lock_guard<std::mutex> lock(g_failures_mu);
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  ++g_failures;
}

std::vector<int64_t> onnx_shape(const halide_buffer_t &b) {
  std::vector<int64_t> s(b.dimensions);
  for (int i = 0; i < b.dimensions; ++i) s[b.dimensions - 1 - i] = b.dim[i].extent;
  return s;
}

std::string shape_text(const std::vector<int64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

// Runs the model on a float32 input; the output comes back in `out`.
bool run(npy_lite::Array &in, std::vector<float> &out, std::vector<int64_t> &out_shape) {
  View x(in.bytes.data(), in.shape, halide_type_float, 32);
  std::vector<halide_dimension_t> ydims(FN(_output_ranks)[0]);
  halide_buffer_t y{};
  y.dim = ydims.data();
  if (FN(_output_shapes)(&x.buf, &y) != 0) {
    failure(std::string("output_shapes: ") + FN(_last_error)());
    return false;
  }
  out_shape = onnx_shape(y);
  int64_t n = 1;
  for (auto d : out_shape) n *= d;
  out.assign(static_cast<size_t>(n), NAN);
  y.host = reinterpret_cast<uint8_t *>(out.data());
  if (FN(_run)(&x.buf, &y) != 0) {
    failure(std::string("run: ") + FN(_last_error)());
    return false;
  }
  return true;
}

// Within rtol/atol of `ref` elementwise; `quiet`: no line when it passes.
void compare(const std::vector<float> &got, const std::vector<int64_t> &shape, const npy_lite::Array &ref,
             double rtol, double atol, const std::string &what, bool quiet = false) {
  if (ref.descr != "<f4") return failure(what + ": reference dtype " + ref.descr);
  if (ref.shape != shape) return failure(what + ": shape " + shape_text(shape) + ", reference " + shape_text(ref.shape));
  const float *r = reinterpret_cast<const float *>(ref.bytes.data());
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double excess = std::fabs(double(got[i]) - r[i]) / (atol + rtol * std::fabs(double(r[i])));
    if (!(excess <= worst)) worst = excess, at = i;  // NaN counts as the worst
  }
  if (!(worst <= 1.0)) {
    char b[256];
    std::snprintf(b, sizeof b, ": element %zu is %.9g, reference %.9g (%.3g x tolerance)", at, got[at], r[at], worst);
    return failure(what + b);
  }
  if (!quiet) std::printf("ok: %s %s (worst %.3g of the tolerance)\n", what.c_str(), shape_text(shape).c_str(), worst);
}

void compare(const std::vector<float> &got, const std::vector<int64_t> &shape, const std::string &ref_path,
             double rtol, double atol, const std::string &what) {
  compare(got, shape, npy_lite::read(ref_path), rtol, atol, what);
}

// The file `disco run --output-dir` writes for an output (tools/cmd_run.cc).
std::string output_file(const std::string &name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return (out.empty() || out[0] == '.' ? "_" + out : out) + ".npy";
}

int check(int argc, char **argv) {
  for (int i = 2; i + 2 < argc; i += 3) {
    npy_lite::Array in = npy_lite::read(argv[i]);
    std::vector<float> out;
    std::vector<int64_t> shape;
    if (!run(in, out, shape)) continue;
    compare(out, shape, argv[i + 1], 1e-4, 1e-5, std::string("vs PyTorch ") + argv[i + 1]);
    // The JIT runs the same kernels; only thread scheduling may differ, so the bar is tight.
    if (std::strcmp(argv[i + 2], "-") != 0) {
      const std::string jit = std::string(argv[i + 2]) + "/" + output_file(FN(_output_names)[0]);
      compare(out, shape, jit, 1e-6, 1e-7, "vs JIT " + jit);
    }
  }
  return g_failures ? 1 : 0;
}

// ||got - ref|| / ||ref|| at most `rel`.
void compare_l2(const std::vector<float> &got, const std::vector<int64_t> &shape, const npy_lite::Array &ref, double rel,
                const std::string &what) {
  if (ref.descr != "<f4") return failure(what + ": reference dtype " + ref.descr);
  if (ref.shape != shape) return failure(what + ": shape " + shape_text(shape) + ", reference " + shape_text(ref.shape));
  const float *r = reinterpret_cast<const float *>(ref.bytes.data());
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = double(got[i]) - r[i];
    num += d * d, den += double(r[i]) * r[i];
  }
  const double err = std::sqrt(num / den);
  char b[160];
  std::snprintf(b, sizeof b, ": relative L2 error %.4f (at most %.4f)", err, rel);
  if (!(err <= rel)) return failure(what + b);
  std::printf("ok: %s %s%s\n", what.c_str(), shape_text(shape).c_str(), b);
}

// Every element equal (the same int8 arithmetic and the same float kernels).
void compare_bits(const std::vector<float> &got, const std::vector<int64_t> &shape, const npy_lite::Array &ref,
                  const std::string &what) {
  if (ref.descr != "<f4" || ref.shape != shape) return failure(what + ": dtype or shape differ");
  const float *r = reinterpret_cast<const float *>(ref.bytes.data());
  size_t diffs = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &r[i], sizeof(float)) != 0) first = diffs++ ? first : i;
  if (diffs) {
    char b[160];
    std::snprintf(b, sizeof b, ": %zu elements differ, the first %zu: %.9g vs %.9g", diffs, first, got[first], r[first]);
    return failure(what + b);
  }
  std::printf("ok: %s %s (bit-equal)\n", what.c_str(), shape_text(shape).c_str());
}

int check_l2(int argc, char **argv) {
  const double rel = std::atof(argv[2]);
  for (int i = 3; i + 2 < argc; i += 3) {
    npy_lite::Array in = npy_lite::read(argv[i]);
    std::vector<float> out;
    std::vector<int64_t> shape;
    if (!run(in, out, shape)) continue;
    compare_l2(out, shape, npy_lite::read(argv[i + 1]), rel, std::string("vs PyTorch ") + argv[i + 1]);
    if (std::strcmp(argv[i + 2], "-") != 0) {
      const std::string jit = std::string(argv[i + 2]) + "/" + output_file(FN(_output_names)[0]);
      compare_bits(out, shape, npy_lite::read(jit), "vs JIT " + jit);
    }
  }
  return g_failures ? 1 : 0;
}

int zeros(const char *path) {
  npy_lite::Array in = npy_lite::read(path);
  std::vector<float> out;
  std::vector<int64_t> shape;
  if (!run(in, out, shape)) return 1;
  size_t nonzero = 0;
  for (float v : out) nonzero += v != 0.0f;
  if (nonzero) failure(std::to_string(nonzero) + " of " + std::to_string(out.size()) + " outputs are not 0");
  else std::printf("ok: %s: all %zu outputs are 0\n", path, out.size());
  return g_failures ? 1 : 0;
}

// Starts `threads` threads that wait for each other, then run `body(t)`.
template <typename Body>
void all_at_once(int threads, Body body) {
  std::mutex mu;
  std::condition_variable cv;
  int ready = 0;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (++ready == threads) cv.notify_all();
        cv.wait(lock, [&] { return ready == threads; });
      }
      body(t);
    });
  for (auto &th : pool) th.join();
}

int concurrent(int threads, int rounds, int argc, char **argv) {
  std::vector<npy_lite::Array> ins, refs;
  for (int i = 4; i + 1 < argc; i += 2) {
    ins.push_back(npy_lite::read(argv[i]));
    refs.push_back(npy_lite::read(argv[i + 1]));
  }
  const int pairs = static_cast<int>(ins.size());
  std::vector<int> runs(threads, 0);
  all_at_once(threads, [&](int t) {
    for (int r = 0; r < rounds; ++r) {
      const int k = (t + r) % pairs;
      npy_lite::Array in = ins[k];  // each run its own input copy: a shared one would hide nothing
      std::vector<float> out;
      std::vector<int64_t> shape;
      if (!run(in, out, shape)) return;
      compare(out, shape, refs[k], 1e-4, 1e-5,
              "thread " + std::to_string(t) + " run " + std::to_string(r) + " vs PyTorch " + argv[5 + 2 * k], true);
      ++runs[t];
      if (t == 0 && r % 7 == 3) FN(_release_memory)();  // while the other threads' runs go on
      // A lower count restarts Halide's pool when no run is in flight: never under a run.
      if (t == 1 && r % 5 == 2) FN(_set_num_threads)(r % 2 ? 1 : 2);
    }
  });
  int total = 0;
  for (int n : runs) total += n;
  std::printf("%s: %d runs on %d threads over %d shapes, every output checked\n", g_failures ? "FAIL" : "ok", total,
              threads, pairs);
  return g_failures || total != threads * rounds ? 1 : 0;
}

int throughput(const char *path, int callers, int runs) {
  const npy_lite::Array in = npy_lite::read(path);
  std::vector<std::chrono::steady_clock::time_point> start(callers), end(callers);
  all_at_once(callers, [&](int t) {
    npy_lite::Array mine = in;
    std::vector<float> out;
    std::vector<int64_t> shape;
    run(mine, out, shape);  // the warm-up: this caller's arena and first-run costs
    start[t] = std::chrono::steady_clock::now();
    for (int r = 0; r < runs; ++r) run(mine, out, shape);
    end[t] = std::chrono::steady_clock::now();
  });
  if (g_failures) return 1;
  const double s = std::chrono::duration<double>(*std::max_element(end.begin(), end.end()) -
                                                 *std::min_element(start.begin(), start.end())).count();
  std::printf("%d callers: %.1f runs/s (%d runs in %.3f s)\n", callers, callers * runs / s, callers * runs, s);
  return 0;
}

// The kernels' parallel loops, watched: which threads ran their tasks. On a
// CPU target they call disco_openmp_do_par_for inside NAME.a (the host
// backend's glue, the loop that honours NAME_set_num_threads); the harness is
// linked with --wrap=disco_openmp_do_par_for, so those calls come here first
// and go on to the library's loop with the task wrapped.
struct ParForWatch {
  std::mutex mu;
  std::set<std::thread::id> threads;
  long tasks = 0;
  bool on = false;
};
ParForWatch g_watch;
struct Wrapped {
  halide_task_t task;
  uint8_t *closure;
};
int watched_task(void *uc, int i, uint8_t *closure) {
  const Wrapped *w = reinterpret_cast<const Wrapped *>(closure);
  {
    std::lock_guard<std::mutex> lock(g_watch.mu);
    g_watch.threads.insert(std::this_thread::get_id());
    ++g_watch.tasks;
  }
  return w->task(uc, i, w->closure);
}
// Weak: a harness linked without --wrap (benchmarks/aot_vs_jit.sh) never calls it.
extern "C" __attribute__((weak)) int __real_disco_openmp_do_par_for(void *uc, halide_task_t task, int min, int size,
                                                                    uint8_t *closure);
extern "C" int __wrap_disco_openmp_do_par_for(void *uc, halide_task_t task, int min, int size, uint8_t *closure) {
  if (!g_watch.on) return __real_disco_openmp_do_par_for(uc, task, min, size, closure);
  Wrapped w{task, closure};
  return __real_disco_openmp_do_par_for(uc, watched_task, min, size, reinterpret_cast<uint8_t *>(&w));
}

int threads(const char *in_path, const char *ref_path) {
  npy_lite::Array in = npy_lite::read(in_path);
  const npy_lite::Array ref = npy_lite::read(ref_path);
  std::vector<float> out;
  std::vector<int64_t> shape;
  g_watch.on = true;
  // Several threads first, so that the pool's workers exist when the count drops to 1.
  FN(_set_num_threads)(4);
  if (FN(_set_num_threads)(4) != 4) failure("set_num_threads(4) twice: the second call does not return 4");
  if (!run(in, out, shape)) return 1;
  compare(out, shape, ref, 1e-4, 1e-5, "4 threads vs PyTorch " + std::string(ref_path));
  std::printf("4 threads: %ld tasks on %zu threads\n", g_watch.tasks, g_watch.threads.size());
  if (FN(_set_num_threads)(1) != 4) failure("set_num_threads(1) does not return the previous count, 4");
  for (int r = 0; r < 3; ++r) {
    g_watch.threads.clear();
    g_watch.tasks = 0;
    if (!run(in, out, shape)) return 1;
    compare(out, shape, ref, 1e-4, 1e-5, "1 thread vs PyTorch " + std::string(ref_path));
    if (g_watch.tasks == 0) failure("no parallel task ran: the model's kernels have no parallel loop to watch");
    else if (g_watch.threads != std::set<std::thread::id>{std::this_thread::get_id()})
      failure("with 1 thread, " + std::to_string(g_watch.threads.size()) + " threads ran the kernels' tasks");
    else std::printf("1 thread: %ld tasks, all on the calling thread\n", g_watch.tasks);
  }
  if (FN(_set_num_threads)(-1) != -1 || std::string(FN(_last_error)()).find("-1") == std::string::npos)
    failure(std::string("set_num_threads(-1) is not refused with a message: '") + FN(_last_error)() + "'");
  if (FN(_set_num_threads)(0) != 1) failure("set_num_threads(-1) changed the count");
  g_watch.on = false;
  return g_failures ? 1 : 0;
}

// The timed runs' input and output in 64-byte aligned memory, as disco run's
// buffers are: a vector's loads and stores then never straddle cache lines (a
// std::vector's 16-byte alignment cost the AOT side up to 10% on memory-bound
// kernels). The output is sized by NAME_output_shapes; `ok` is false (and the
// failure said) when that fails.
struct AlignedIo {
  std::unique_ptr<uint8_t, decltype(&std::free)> xa, ya;
  View x;
  std::vector<halide_dimension_t> ydims;
  halide_buffer_t y{};
  bool ok = false;
  AlignedIo(const npy_lite::Array &in, size_t out_bytes)
      : xa(static_cast<uint8_t *>(std::aligned_alloc(64, (in.bytes.size() + 63) / 64 * 64)), &std::free),
        ya(static_cast<uint8_t *>(std::aligned_alloc(64, (out_bytes + 63) / 64 * 64)), &std::free),
        x(copy_into(xa.get(), in), in.shape, halide_type_float, 32),
        ydims(FN(_output_ranks)[0]) {
    y.dim = ydims.data();
    if (FN(_output_shapes)(&x.buf, &y) != 0) {
      failure(std::string("output_shapes: ") + FN(_last_error)());
      return;
    }
    y.host = ya.get();
    ok = true;
  }
  static uint8_t *copy_into(uint8_t *dst, const npy_lite::Array &in) {
    std::memcpy(dst, in.bytes.data(), in.bytes.size());
    return dst;
  }
};

// Times NAME_run alone: the output is allocated once, as `disco run --repeat` does.
int time_runs(const char *path, int runs) {
  npy_lite::Array in = npy_lite::read(path);
  std::vector<float> out;
  std::vector<int64_t> shape;
  if (!run(in, out, shape)) return 1;  // the warm-up, which sizes `out`
  AlignedIo io(in, out.size() * sizeof(float));
  if (!io.ok) return 1;
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (FN(_run)(&io.x.buf, &io.y) != 0) return failure(std::string("run: ") + FN(_last_error)()), 1;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("median %.3f ms over %d\n", ms[ms.size() / 2], runs);
  return 0;
}

// Times NAME_run as `disco bench` does: untimed runs for `warmup` seconds, then
// timed runs for `seconds` (at least 10), the median of those. A run count fixed
// in advance is too few for 20 us runs (the pool and caches still settling) or
// too many for 300 ms ones; a time budget gives both sides the same footing.
int bench_runs(const char *path, double warmup, double seconds) {
  npy_lite::Array in = npy_lite::read(path);
  std::vector<float> out;
  std::vector<int64_t> shape;
  if (!run(in, out, shape)) return 1;  // sizes `out`
  AlignedIo io(in, out.size() * sizeof(float));
  if (!io.ok) return 1;
  using clock = std::chrono::steady_clock;
  const auto run_once = [&] {
    if (FN(_run)(&io.x.buf, &io.y) != 0) throw std::runtime_error(std::string("run: ") + FN(_last_error)());
  };
  for (const auto t0 = clock::now(); std::chrono::duration<double>(clock::now() - t0).count() < warmup;) run_once();
  std::vector<double> ms;
  for (const auto t0 = clock::now(); ms.size() < 10 || std::chrono::duration<double>(clock::now() - t0).count() < seconds;) {
    const auto r0 = clock::now();
    run_once();
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - r0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("median %.4f ms over %zu\n", ms[ms.size() / 2], ms.size());
  return 0;
}

// Expects a non-zero code and a message holding each of `needles`.
void expect_error(int rc, const std::string &what, const std::vector<std::string> &needles) {
  const std::string msg = FN(_last_error)();
  if (rc == 0) return failure(what + ": returned 0");
  for (const auto &n : needles)
    if (msg.find(n) == std::string::npos) return failure(what + ": message '" + msg + "' lacks '" + n + "'");
  std::printf("ok: %s -> %s\n", what.c_str(), msg.c_str());
}

int errors(const char *path) {
  npy_lite::Array in = npy_lite::read(path);
  const std::string name = FN(_input_names)[0];
  const std::string input = "input '" + name + "'";
  std::vector<float> out;
  std::vector<int64_t> out_shape;
  if (!run(in, out, out_shape)) return 1;
  View y(out.data(), out_shape, halide_type_float, 32);
  // A fixed dim (a number in the declared dims) off by one.
  std::string dims = FN(_input_dims)[0];
  dims = dims.substr(1, dims.size() - 2);
  int fixed = -1, d = 0;
  for (size_t p = 0; p <= dims.size(); ++d) {
    size_t q = dims.find(", ", p);
    if (q == std::string::npos) q = dims.size();
    const std::string item = dims.substr(p, q - p);
    if (fixed < 0 && !item.empty() && item.find_first_not_of("0123456789") == std::string::npos) fixed = d;
    p = q + 2;
  }
  if (fixed >= 0) {
    std::vector<int64_t> bad = in.shape;
    bad[fixed] += 1;
    std::vector<float> big(static_cast<size_t>(in.elements() / in.shape[fixed] * bad[fixed]), 0.5f);
    View x(big.data(), bad, halide_type_float, 32);
    expect_error(FN(_run)(&x.buf, &y.buf), "wrong fixed dim",
                 {input + " dim " + std::to_string(fixed) + " is " + std::to_string(bad[fixed]), "expected"});
    expect_error(FN(_output_shapes)(&x.buf, &y.buf), "wrong fixed dim (output_shapes)",
                 {input + " dim " + std::to_string(fixed)});
  } else {
    std::printf("skip: %s has no fixed dim\n", name.c_str());
  }
  {
    std::vector<int64_t> bad(in.shape.begin() + 1, in.shape.end());
    View x(in.bytes.data(), bad, halide_type_float, 32);
    expect_error(FN(_run)(&x.buf, &y.buf), "wrong rank", {input + " has rank " + std::to_string(bad.size())});
  }
  {
    View x(in.bytes.data(), in.shape, halide_type_int, 32);
    expect_error(FN(_run)(&x.buf, &y.buf), "wrong dtype", {input + " has dtype int32, expected float32"});
  }
  {
    View x(nullptr, in.shape, halide_type_float, 32);
    expect_error(FN(_run)(&x.buf, &y.buf), "null host", {input, "host is null"});
  }
  {
    View x(in.bytes.data(), in.shape, halide_type_float, 32);
    std::vector<int64_t> bad = out_shape;
    bad.back() += 1;
    std::vector<float> big(out.size() / out_shape.back() * bad.back());
    View yb(big.data(), bad, halide_type_float, 32);
    const std::string output = std::string("output '") + FN(_output_names)[0] + "' dim " + std::to_string(bad.size() - 1);
    expect_error(FN(_run)(&x.buf, &yb.buf), "wrong output shape", {output});
    // A good call afterwards still works and clears the message.
    if (FN(_run)(&x.buf, &y.buf) != 0 || FN(_last_error)()[0] != 0) failure("a good run after errors failed");
  }
  // Halide's own error path (what a failing kernel calls) is captured: its
  // default handler would abort the process.
  halide_error(nullptr, "a Halide error\n");
  if (std::string(disco_aot_halide_message()).find("a Halide error") == std::string::npos)
    failure("Halide's error message was not captured");
  else
    std::printf("ok: halide_error() is captured, the process goes on\n");
  return g_failures ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "names") {
      for (int i = 0; i < FN(_num_inputs); ++i) std::printf("%s\n", FN(_input_names)[i]);
      return 0;
    }
    if (mode == "check" && argc >= 5 && (argc - 2) % 3 == 0) return check(argc, argv);
    if (mode == "check_l2" && argc >= 6 && (argc - 3) % 3 == 0 && std::atof(argv[2]) > 0) return check_l2(argc, argv);
    if (mode == "zeros" && argc == 3) return zeros(argv[2]);
    if (mode == "errors" && argc == 3) return errors(argv[2]);
    if (mode == "time" && (argc == 4 || argc == 5) && std::atoi(argv[3]) > 0) {
      if (argc == 5) FN(_set_num_threads)(std::atoi(argv[4]));  // Halide's pool and the glue's kernels
      return time_runs(argv[2], std::atoi(argv[3]));
    }
    if (mode == "bench" && argc == 6 && std::atof(argv[3]) >= 0 && std::atof(argv[4]) > 0 && std::atoi(argv[5]) > 0) {
      FN(_set_num_threads)(std::atoi(argv[5]));
      return bench_runs(argv[2], std::atof(argv[3]), std::atof(argv[4]));
    }
    if (mode == "threads" && argc == 4) return threads(argv[2], argv[3]);
    if (mode == "concurrent" && argc >= 6 && argc % 2 == 0 && std::atoi(argv[2]) > 0 && std::atoi(argv[3]) > 0)
      return concurrent(std::atoi(argv[2]), std::atoi(argv[3]), argc, argv);
    if (mode == "throughput" && argc == 5 && std::atoi(argv[3]) > 0 && std::atoi(argv[4]) > 0)
      return throughput(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s names | check IN REF JIT... | check_l2 REL IN REF JIT... | zeros IN | errors IN | concurrent THREADS ROUNDS IN REF... | threads IN REF | time IN RUNS [THREADS] | bench IN WARMUP SECONDS THREADS | "
               "throughput IN CALLERS RUNS\n", argv[0]);
  return 2;
}
