// disco_conformance: runs the ONNX backend node tests through disco.
//
// Each test runs in a child process (a crash or hang is recorded, never fatal)
// in one of two modes: static (shapes as the model declares them) or dynamic
// (every input dim a fresh symbol; one compile serves all data sets). Results
// are compared with ONNX's tolerances and checked against the expected-failures
// file: an unlisted failure fails the run, and so does a listed test that now
// passes, so the list can only shrink.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "driver/backend_registry.h"
#include "frontend/errors.h"
#include "frontend/onnx_importer.h"
#include "lowering/graph_rewrites.h"
#include "lowering/infer_context.h"
#include "runtime/executor.h"
#include "targets/backend.h"
#include "targets/partitioner.h"
#include "targets/gpu/gpu_target.h"
#include "driver/session.h"
#include "tests/conformance/scope.h"

namespace disco::conformance {
namespace {

const char *kHelp =
    "usage: disco_conformance --mode static|dynamic [options]\n"
    "\n"
    "Runs every ONNX backend node test (Debian's libonnx-testdata) through disco.\n"
    "\n"
    "  --mode M             static: shapes as declared; dynamic: every input dim a fresh symbol\n"
    "  --data DIR           test folder (default /usr/share/libonnx-testdata/data/node)\n"
    "  --expected FILE      expected-failures file: lines 'TEST MODE REASON'\n"
    "  --write-expected     rewrite FILE's lines for this mode from this run's failures\n"
    "  --filter TEXT[,TEXT] only tests whose name contains one of the TEXTs\n"
    "  --shard K/N          only the K-th of N interleaved parts of the (filtered) tests, K from 1\n"
    "  --jobs N             parallel test processes (default: number of cores)\n"
    "  --timeout S          seconds per test before it counts as hung (default 300)\n"
    "  --target T           host (default), opencl, cuda or a Halide target string\n"
    "  --targets B1,B2,...  backends in priority order (default host), e.g. onednn,host\n"
    "  --only-claimed-by B  run only the tests in which backend B takes a node; the rest are\n"
    "                       skipped (they would run the kernels of the backends after it)\n"
    "  --verbose            print every test's result\n";

struct Outcome {
  enum Kind { Pass, Fail, Skip } kind = Fail;
  std::string reason;
};

std::vector<std::string> list_dir(const std::string &dir, const std::string &prefix) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind(prefix, 0) == 0) out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string one_line(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > 400) s = s.substr(0, 400) + "...";
  return s;
}

std::vector<TensorData> read_numbered(const std::string &dir, const std::string &prefix) {
  std::vector<TensorData> out;
  for (int i = 0;; ++i) {
    std::string p = dir + "/" + prefix + std::to_string(i) + ".pb";
    if (!exists(p)) break;
    out.push_back(load_onnx_tensor_file(p));
  }
  return out;
}

std::string shape_text(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// ONNX's backend-test tolerances: rtol 1e-3, atol 1e-7, NaN equals NaN; exact for ints and bools.
std::string compare(const TensorData &got, const TensorData &want, const std::string &name) {
  if (got.dtype != want.dtype)
    return "output '" + name + "' has dtype " + dtype_name(got.dtype) + ", expected " + dtype_name(want.dtype);
  if (got.shape != want.shape)
    return "output '" + name + "' has shape " + shape_text(got.shape) + ", expected " + shape_text(want.shape);
  const bool is_float = dtype_is_float(want.dtype);
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (is_float) {
      double a = got.float_at(i), b = want.float_at(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b) continue;  // also equal infinities
      if (std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b)) continue;
      return "output '" + name + "' element " + std::to_string(i) + " is " + std::to_string(a) + ", expected " +
             std::to_string(b);
    } else if (std::memcmp(got.data() + i * dtype_size(want.dtype), want.data() + i * dtype_size(want.dtype),
                           dtype_size(want.dtype)) != 0) {
      return "output '" + name + "' element " + std::to_string(i) + " is " + std::to_string(got.int_at(i)) +
             ", expected " + std::to_string(want.int_at(i));
    }
  }
  return "";
}

// ONNX 1.12's generator wrote bfloat16 test tensors as uint16 holding the
// same bits (numpy has no bfloat16): read them as the bfloat16 the model declares.
void read_as_declared(std::vector<TensorData> &ts, const std::vector<DType> &declared) {
  for (size_t i = 0; i < ts.size() && i < declared.size(); ++i)
    if (ts[i].dtype == DType::U16 && declared[i] == DType::BF16) ts[i].dtype = DType::BF16;
}

// Whether backend `only` takes a node of `g` when partitioned among
// `base.backends` (after the compiler's graph rewrites). A graph that does
// not infer counts as taken: its compile reports the error.
bool claimed_by(const Graph &g, const std::string &only, const CompileOptions &base) {
  try {
    Graph probe = g;
    ShapeStore store;
    infer_shapes(probe, store);
    rewrite_graph(probe);
    const auto owned = make_backends(base.backends, base.backend_options);
    std::vector<const Backend *> backends;
    for (const auto &b : owned) backends.push_back(b.get());
    for (const Region &r : partition_graph(probe, store, backends, base.partition).regions)
      if (r.backend == only) return true;
    return false;
  } catch (const std::exception &) {
    return true;
  }
}

Outcome run_case(const std::string &dir, const std::string &name, bool dynamic, const CompileOptions &base,
                 const std::string &only_claimed_by) {
  const std::string model = dir + "/model.onnx";
  if (auto why = out_of_scope_reason(model)) return {Outcome::Skip, *why};
  try {
    Graph g = load_onnx_file(model);
    if (dynamic) {
      for (int id : g.inputs) {
        Value &v = g.value(id);
        if (!v.shape) continue;
        for (size_t d = 0; d < v.shape->size(); ++d) (*v.shape)[d] = Dim::symbol(v.name + "_d" + std::to_string(d));
      }
    }
    if (!only_claimed_by.empty() && !claimed_by(g, only_claimed_by, base))
      return {Outcome::Skip, "no node for " + only_claimed_by};
    std::ifstream f(model, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    CompileOptions opts = base;
    std::vector<DType> in_types, out_types;
    for (int id : g.inputs) in_types.push_back(g.value(id).dtype);
    for (int id : g.outputs) out_types.push_back(g.value(id).dtype);
    Session session(std::move(g), name, ss.str() + (dynamic ? "#dynamic" : "#static"), opts);
    auto sets = list_dir(dir, "test_data_set_");
    if (sets.empty()) return {Outcome::Fail, "no test data sets"};
    for (const auto &set : sets) {
      auto inputs = read_numbered(dir + "/" + set, "input_");
      auto want = read_numbered(dir + "/" + set, "output_");
      read_as_declared(inputs, in_types);
      read_as_declared(want, out_types);
      if (inputs.size() != session.inputs().size())
        return {Outcome::Fail, set + " gives " + std::to_string(inputs.size()) + " inputs, the model takes " +
                                   std::to_string(session.inputs().size())};
      auto got = session.run(inputs);
      if (got.size() < want.size()) return {Outcome::Fail, "too few outputs"};
      for (size_t i = 0; i < want.size(); ++i) {
        std::string diff = compare(got[i], want[i], session.output_names()[i]);
        if (!diff.empty()) return {Outcome::Fail, set + ": " + diff};
      }
    }
    return {Outcome::Pass, ""};
  } catch (const std::exception &e) {
    return {Outcome::Fail, one_line(e.what())};
  }
}

// Runs one test in a child process; a crash, abort or hang becomes a failure.
struct Child {
  pid_t pid;
  int fd;
  std::string name;
  std::string out;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

Child start_case(const std::string &data, const std::string &name, bool dynamic, const CompileOptions &base,
                 const std::string &only_claimed_by, int timeout) {
  int fds[2];
  DISCO_CHECK(pipe(fds) == 0, "pipe failed");
  pid_t pid = fork();
  DISCO_CHECK(pid >= 0, "fork failed");
  if (pid == 0) {
    close(fds[0]);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    alarm(static_cast<unsigned>(timeout));
    Outcome o = run_case(data + "/" + name, name, dynamic, base, only_claimed_by);
    std::string msg = std::string(o.kind == Outcome::Pass ? "P" : o.kind == Outcome::Skip ? "S" : "F") + o.reason;
    ssize_t ignored = write(fds[1], msg.data(), msg.size());
    (void)ignored;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  return {pid, fds[0], name, ""};
}

Outcome finish_case(Child &c, int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return {Outcome::Fail, sig == SIGALRM ? "timed out" : std::string("crashed with signal ") + strsignal(sig)};
  }
  if (c.out.empty()) return {Outcome::Fail, "exited without a result"};
  Outcome o;
  o.kind = c.out[0] == 'P' ? Outcome::Pass : c.out[0] == 'S' ? Outcome::Skip : Outcome::Fail;
  o.reason = c.out.substr(1);
  return o;
}

std::map<std::string, Outcome> run_all(const std::string &data, const std::vector<std::string> &names, bool dynamic,
                                       const CompileOptions &base, const std::string &only_claimed_by, int jobs,
                                       int timeout, bool verbose) {
  std::map<std::string, Outcome> results;
  std::vector<Child> running;
  size_t next = 0, done = 0;
  while (done < names.size()) {
    while (next < names.size() && static_cast<int>(running.size()) < jobs)
      running.push_back(start_case(data, names[next++], dynamic, base, only_claimed_by, timeout));
    std::vector<pollfd> pfds;
    for (auto &c : running) pfds.push_back({c.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 1000);
    std::vector<bool> finished(running.size(), false);
    for (size_t i = 0; i < running.size(); ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child &c = running[i];
      char buf[4096];
      ssize_t n = read(c.fd, buf, sizeof buf);
      if (n > 0) {
        c.out.append(buf, static_cast<size_t>(n));
        continue;
      }
      int status = 0;  // end of the pipe: the child has exited or is exiting
      waitpid(c.pid, &status, 0);
      close(c.fd);
      Outcome o = finish_case(c, status);
      if (verbose) {
        // Each test's wall time, so that a slow run says which tests its time went to.
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.started).count();
        std::printf("%-60s %6.2f s %s %s\n", c.name.c_str(), s,
                    o.kind == Outcome::Pass ? "pass" : o.kind == Outcome::Skip ? "skip" : "FAIL", o.reason.c_str());
      }
      results[c.name] = o;
      finished[i] = true;
      ++done;
    }
    std::vector<Child> still;
    for (size_t i = 0; i < running.size(); ++i)
      if (!finished[i]) still.push_back(running[i]);
    running.swap(still);
  }
  return results;
}

struct Expected {
  std::map<std::string, std::string> failures;  // this mode: test -> reason
  std::vector<std::string> other_lines;          // other modes and comments, kept on rewrite
};

Expected read_expected(const std::string &path, const std::string &mode) {
  Expected e;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string test, m;
    ls >> test >> m;
    if (test.empty() || test[0] == '#' || m != mode) {
      e.other_lines.push_back(line);
      continue;
    }
    std::string reason;
    std::getline(ls, reason);
    e.failures[test] = reason.empty() ? "" : reason.substr(reason.find_first_not_of(' ') == std::string::npos ? 0 : reason.find_first_not_of(' '));
  }
  return e;
}

// --filter a,b,c: tests whose name contains any of them.
bool matches_filter(const std::string &name, const std::string &filter) {
  if (filter.empty()) return true;
  for (size_t start = 0;;) {
    const size_t comma = filter.find(',', start);
    const std::string part = filter.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!part.empty() && name.find(part) != std::string::npos) return true;
    if (comma == std::string::npos) return false;
    start = comma + 1;
  }
}

// --shard K/N: every N-th test from the K-th on, so that each part takes tests from every op family.
std::vector<std::string> shard_of(const std::vector<std::string> &names, const std::string &spec, bool write_expected) {
  auto number = [](const std::string &t) {
    const bool digits = !t.empty() && t.size() < 9 && std::all_of(t.begin(), t.end(), ::isdigit);
    return digits ? std::stoi(t) : 0;
  };
  const size_t slash = spec.find('/');
  const int k = slash == std::string::npos ? 0 : number(spec.substr(0, slash));
  const int n = slash == std::string::npos ? 0 : number(spec.substr(slash + 1));
  if (n < 1 || k < 1 || k > n) fail("--shard '", spec, "' must be K/N with 1 <= K <= N");
  // The expected-failures file lists every test of a mode; a part cannot rewrite it.
  if (write_expected) fail("--write-expected needs every test of the mode: leave out --shard");
  std::vector<std::string> out;
  for (size_t i = static_cast<size_t>(k - 1); i < names.size(); i += static_cast<size_t>(n)) out.push_back(names[i]);
  return out;
}

int main_impl(int argc, char **argv) {
  std::string mode, data = "/usr/share/libonnx-testdata/data/node", expected, filter, target = "host",
              backends = "host", only_claimed_by, shard;
  int jobs = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), timeout = 300;
  bool write_expected = false, verbose = false, backends_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a, " needs a value");
      return argv[++i];
    };
    if (a == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (a == "--mode") mode = value();
    else if (a == "--data") data = value();
    else if (a == "--expected") expected = value();
    else if (a == "--filter") filter = value();
    else if (a == "--shard") shard = value();
    else if (a == "--target") target = value();
    else if (a == "--targets") backends = value(), backends_given = true;
    else if (a == "--only-claimed-by") only_claimed_by = value();
    else if (a == "--jobs") jobs = std::max(1, std::stoi(value()));
    else if (a == "--timeout") timeout = std::max(1, std::stoi(value()));
    else if (a == "--write-expected") write_expected = true;
    else if (a == "--verbose") verbose = true;
    else fail("unknown option '", a, "' (see --help)");
  }
  if (mode != "static" && mode != "dynamic") fail("--mode must be static or dynamic");
  if (!exists(data)) {
    std::printf("conformance: test data not found at %s (install libonnx-testdata); skipping\n", data.c_str());
    return 77;
  }
  std::vector<std::string> names;
  for (const auto &n : list_dir(data, "test_"))
    if (matches_filter(n, filter)) names.push_back(n);
  if (!shard.empty()) names = shard_of(names, shard, write_expected);
  // A run of no tests would pass: a filter or part that selects none is an error.
  if (names.empty()) fail("no test in ", data, " matches --filter '", filter, "' and --shard '", shard, "'");

  CompileOptions base;
  base.target = expand_gpu_target(target);  // opencl, cuda: their backend unless --targets says otherwise
  if (!backends_given && !gpu_api_of(base.target).empty()) backends = gpu_api_of(base.target);
  base.backends.clear();
  for (size_t start = 0;;) {
    const size_t comma = backends.find(',', start);
    base.backends.push_back(backends.substr(start, comma == std::string::npos ? comma : comma - start));
    DISCO_CHECK(!base.backends.back().empty(), "--targets '", backends, "' has an empty backend name");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  make_backends(base.backends);  // unknown names fail here, not in every child
  if (!only_claimed_by.empty() &&
      std::find(base.backends.begin(), base.backends.end(), only_claimed_by) == base.backends.end())
    fail("--only-claimed-by ", only_claimed_by, " names none of --targets ", backends);
  auto results = run_all(data, names, mode == "dynamic", base, only_claimed_by, jobs, timeout, verbose);
  Expected exp = expected.empty() ? Expected{} : read_expected(expected, mode);
  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::string> unexpected_fail, unexpected_pass;
  for (const auto &[name, o] : results) {
    if (o.kind == Outcome::Skip) {
      ++skipped;
      continue;
    }
    bool listed = exp.failures.count(name) != 0;
    if (o.kind == Outcome::Pass) {
      ++passed;
      if (listed) unexpected_pass.push_back(name);
    } else {
      ++failed;
      if (!listed) unexpected_fail.push_back(name + ": " + o.reason);
    }
  }
  if (write_expected && !expected.empty()) {
    std::ofstream f(expected);
    for (const auto &l : exp.other_lines) f << l << "\n";
    for (const auto &[name, o] : results)
      if (o.kind == Outcome::Fail) f << name << " " << mode << " " << o.reason << "\n";
    std::printf("rewrote the %s lines of %s\n", mode.c_str(), expected.c_str());
  } else {
    for (const auto &u : unexpected_fail) std::printf("unexpected failure: %s\n", u.c_str());
    for (const auto &u : unexpected_pass)
      std::printf("unexpected pass (remove it from the expected failures): %s\n", u.c_str());
  }
  std::printf("mode %s, targets %s: %d of %d in-scope tests pass (%.1f%%); %zu unexpected failures, %zu unexpected passes\n",
              mode.c_str(), backends.c_str(), passed, passed + failed, passed + failed ? 100.0 * passed / (passed + failed) : 0.0,
              unexpected_fail.size(), unexpected_pass.size());
  std::printf("conformance: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
  bool ok = write_expected || (unexpected_fail.empty() && unexpected_pass.empty());
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace disco::conformance

int main(int argc, char **argv) {
  try {
    return disco::conformance::main_impl(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "disco_conformance: error: %s\n", e.what());
    return 2;
  }
}
