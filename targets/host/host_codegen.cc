#include "targets/host/host_codegen.h"
#include "lowering/host_target.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "frontend/errors.h"

namespace disco {

Halide::Target parse_target(const std::string &name) {
  if (name.empty() || name == "host") return usable_host_target();  // lowering/host_target.h
  DISCO_CHECK(Halide::Target::validate_target_string(name), "unknown target '", name,
              "' (use host or a Halide target string such as x86-64-linux-avx2)");
  return Halide::Target(name);
}

void compile_kernel_object(LoweredKernel &k, const std::string &fn_name, const std::string &object_path,
                           const Halide::Target &target, CompileProfile *profile) {
  std::vector<Halide::Argument> args;
  for (auto &p : k.input_params) args.emplace_back(p);
  for (auto &[name, p] : k.syms.used()) args.emplace_back(p);
  Halide::Pipeline p(k.outputs);
  try {
    const Halide::Target t = target.with_feature(Halide::Target::NoRuntime);
    // DISCO_STMT_DIR=dir keeps each kernel's lowered loop nest, to read what a schedule became.
    if (const char *dir = std::getenv("DISCO_STMT_DIR"); dir && *dir)
      p.compile_to_lowered_stmt(std::string(dir) + "/" + fn_name + ".stmt", args, Halide::Text, t);
    // Lowering, then code generation, timed apart (what compile_to_object does in one call).
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    Halide::Module module = p.compile_to_module(args, fn_name, t);
    const auto t1 = Clock::now();
    module.compile({{Halide::OutputFileType::object, object_path}});
    if (profile) {
      profile->halide_s += std::chrono::duration<double>(t1 - t0).count();
      profile->codegen_s += std::chrono::duration<double>(Clock::now() - t1).count();
    }
  } catch (const Halide::Error &e) {
    fail("Halide could not compile kernel ", fn_name, ": ", e.what());
  }
}

void compile_runtime_object(const std::string &object_path, const Halide::Target &target) {
  Halide::compile_standalone_runtime(object_path, target);
}

void link_shared_library(const std::vector<std::string> &objects, const std::string &out_path) {
  std::vector<std::string> argv = {"cc", "-shared", "-o", out_path};
  argv.insert(argv.end(), objects.begin(), objects.end());
  for (const char *lib : {"-lpthread", "-ldl", "-lm"}) argv.emplace_back(lib);
  std::vector<char *> cargs;
  for (auto &a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid = fork();
  DISCO_CHECK(pid >= 0, "cannot start the linker");
  if (pid == 0) {
    execvp("cc", cargs.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  DISCO_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "linking '", out_path, "' failed (is a C compiler 'cc' installed?)");
}

}  // namespace disco
