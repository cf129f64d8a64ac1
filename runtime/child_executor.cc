#include "runtime/child_executor.h"

#include <dlfcn.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "frontend/errors.h"
#include "runtime/npy.h"

extern char **environ;

namespace disco {

namespace {

std::vector<std::string> split_tabs(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t t = s.find('\t', start);
    out.push_back(s.substr(start, t == std::string::npos ? std::string::npos : t - start));
    if (t == std::string::npos) return out;
    start = t + 1;
  }
}

// Messages cross the pipe as one line.
std::string one_line(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\t') c = ' ';
  return s;
}

std::string in_file(const std::string &dir, size_t i) { return dir + "/in" + std::to_string(i) + ".npy"; }
std::string out_file(const std::string &dir, size_t i) { return dir + "/out" + std::to_string(i) + ".npy"; }

// Writes all of `msg`; false when the reader is gone. SIGPIPE is blocked for
// the write and a pending one consumed, so a dead child cannot kill this process.
bool write_all(int fd, const std::string &msg) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  const bool ok = write(fd, msg.data(), msg.size()) == static_cast<ssize_t>(msg.size());
  if (!ok) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

// .npy has no bfloat16: such tensors travel as their uint16 bits and get
// their dtype back from the plan on the other side.
void write_tensor(const std::string &path, const TensorData &t) {
  if (t.dtype != DType::BF16) return write_npy(path, t);
  TensorData bits = t;
  bits.dtype = DType::U16;
  write_npy(path, bits);
}

TensorData read_tensor(const std::string &path, DType expected) {
  TensorData t = read_npy(path);
  if (expected == DType::BF16 && t.dtype == DType::U16) t.dtype = DType::BF16;
  return t;
}

bool file_exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

}  // namespace

bool plan_needs_child_process(const Plan &plan, const std::string &dir) {
  if (plan.library.empty()) return false;
  if (const char *e = std::getenv("DISCO_IN_PROCESS"); e && std::string(e) == "1") return false;
  // Loading the library runs nothing: the OpenCL runtime starts at the first kernel call.
  void *h = dlopen((dir + "/" + plan.library).c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!h) return false;  // the Executor reports the error itself
  const bool opencl = dlsym(h, "halide_opencl_device_interface") != nullptr;
  dlclose(h);
  return opencl;
}

std::string disco_exec_path() {
  if (const char *e = std::getenv("DISCO_EXEC"); e && *e) return e;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::string p = (self.parent_path() / "disco-exec").string();
    if (file_exists(p)) return p;
  }
#ifdef DISCO_EXEC_BUILD_PATH
  if (file_exists(DISCO_EXEC_BUILD_PATH)) return DISCO_EXEC_BUILD_PATH;
#endif
  fail("cannot find disco-exec, which runs OpenCL plans outside this process; set DISCO_EXEC to its path");
}

ChildExecutor::ChildExecutor(const Plan &plan, const std::string &dir)
    : plan_name_(plan.name), num_outputs_(plan.output_buffers.size()) {
  for (int b : plan.output_buffers) output_dtypes_.push_back(plan.buffers[b].dtype);
  const char *tmp = std::getenv("TMPDIR");
  std::string work = std::string(tmp && *tmp ? tmp : "/tmp") + "/disco-exec-XXXXXX";
  DISCO_CHECK(mkdtemp(work.data()), "cannot create a temporary folder for disco-exec");
  work_dir_ = work;
  plan.save(work_dir_ + "/plan.txt");
  const std::string exe = disco_exec_path();
  int in[2], out[2];
  DISCO_CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0, "cannot create pipes for disco-exec");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<std::string> args = {exe, "--serve", work_dir_ + "/plan.txt", dir, work_dir_};
  std::vector<char *> argv;
  for (auto &a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  if (rc != 0) {
    shut_down();
    fail("cannot start '", exe, "': ", std::strerror(rc));
  }
  pid_ = pid;
  try {
    request("hello");  // the child loads the plan and its library now: errors surface here
  } catch (...) {
    shut_down();
    throw;
  }
}

ChildExecutor::~ChildExecutor() { shut_down(); }

void ChildExecutor::shut_down() {
  if (to_child_ >= 0) close(to_child_);  // end of input: the child exits
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
  pid_ = -1;
  std::error_code ec;
  std::filesystem::remove_all(work_dir_, ec);
}

std::vector<std::string> ChildExecutor::request(const std::string &line) {
  DISCO_CHECK(pid_ > 0, "model '", plan_name_, "': its disco-exec process has ended");
  const std::string msg = line + "\n";
  bool alive = write_all(to_child_, msg);
  std::string reply;
  char c;
  while (alive) {
    const ssize_t n = read(from_child_, &c, 1);
    if (n == 1 && c == '\n') break;
    if (n == 1) {
      reply += c;
      continue;
    }
    alive = false;
  }
  if (!alive) {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    fail("model '", plan_name_, "': disco-exec ended while running it (",
         WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                             : "exit code " + std::to_string(WEXITSTATUS(status)),
         ")");
  }
  auto fields = split_tabs(reply);
  if (fields[0] == "error") throw Error(fields.size() > 1 ? fields[1] : "disco-exec failed");
  DISCO_CHECK(fields[0] == "ok", "model '", plan_name_, "': disco-exec replied '", reply, "'");
  fields.erase(fields.begin());
  return fields;
}

void ChildExecutor::run(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs,
                        SymbolValues *symbols) {
  for (size_t i = 0; i < inputs.size(); ++i) write_tensor(in_file(work_dir_, i), inputs[i]);
  auto fields = request("run\t" + std::to_string(inputs.size()));
  symbols->clear();
  for (size_t i = 0; i + 1 < fields.size(); i += 2) (*symbols)[fields[i]] = std::stoll(fields[i + 1]);
  outputs.resize(num_outputs_);
  for (size_t i = 0; i < num_outputs_; ++i) outputs[i] = read_tensor(out_file(work_dir_, i), output_dtypes_[i]);
}

void ChildExecutor::set_num_threads(int n) { request("threads\t" + std::to_string(n)); }
void ChildExecutor::set_profiling(bool on) { request(std::string("profile\t") + (on ? "1" : "0")); }

std::vector<Executor::StepTime> ChildExecutor::profile() {
  auto fields = request("getprofile");
  std::vector<Executor::StepTime> out;
  for (size_t i = 0; i + 1 < fields.size(); i += 2) out.push_back({fields[i], std::stod(fields[i + 1])});
  return out;
}

int serve_plan(const std::string &plan_file, const std::string &lib_dir, const std::string &work_dir, int reply_fd) {
  std::unique_ptr<Executor> exec;
  std::string line;
  while (std::getline(std::cin, line)) {
    auto cmd = split_tabs(line);
    std::string reply = "ok";
    try {
      if (!exec) exec = std::make_unique<Executor>(Plan::load(plan_file), lib_dir, /*allow_child=*/false);
      if (cmd[0] == "run") {
        std::vector<TensorData> inputs, outputs;
        const auto &specs = exec->plan().inputs;
        for (size_t i = 0, n = std::stoul(cmd.at(1)); i < n; ++i)
          inputs.push_back(read_tensor(in_file(work_dir, i), i < specs.size() ? specs[i].dtype : DType::Undefined));
        exec->run(inputs, outputs);
        for (size_t i = 0; i < outputs.size(); ++i) write_tensor(out_file(work_dir, i), outputs[i]);
        for (const auto &[s, v] : exec->last_symbols()) reply += "\t" + one_line(s) + "\t" + std::to_string(v);
      } else if (cmd[0] == "threads") {
        exec->set_num_threads(std::stoi(cmd.at(1)));
      } else if (cmd[0] == "profile") {
        exec->set_profiling(cmd.at(1) == "1");
      } else if (cmd[0] == "getprofile") {
        for (const auto &s : exec->profile()) reply += "\t" + one_line(s.label) + "\t" + std::to_string(s.ms);
      } else if (cmd[0] != "hello") {
        reply = "error\tdisco-exec: unknown command '" + one_line(cmd[0]) + "'";
      }
    } catch (const std::exception &e) {
      reply = "error\t" + one_line(e.what());
    }
    reply += "\n";
    if (write(reply_fd, reply.data(), reply.size()) != static_cast<ssize_t>(reply.size())) return 1;
  }
  return 0;
}

}  // namespace disco
