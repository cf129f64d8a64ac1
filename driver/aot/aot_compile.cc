#include "driver/aot/aot_compile.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "frontend/errors.h"
#include "frontend/file_util.h"
#include "driver/aot/c_text.h"
#include "driver/aot/driver_gen.h"
#include "driver/aot/header_gen.h"
#include "driver/aot/installed_archive_dir.h"
#include "driver/aot/link_flags.h"
#include "driver/backend_registry.h"
#include "driver/compile_model.h"
#include "targets/gpu/gpu_target.h"
#include "targets/host/host_codegen.h"

namespace disco::aot {

namespace fs = std::filesystem;

namespace {

// What the plan's extern steps need in the archive and the link.
struct PlanGlue {
  std::string backends;  // for the progress line
  std::vector<std::string> install_functions, archives, link_flags;
  std::vector<std::string> files;  // in the compile folder, to install beside NAME.a (AotGlue::file_params)
  std::string par_for_function, par_for_threads_function;  // the first backend's that has them
};

// Runs a tool in `dir`, so that relative names (never temp paths) reach the objects.
void run_tool(const std::vector<std::string> &argv, const std::string &dir) {
  std::vector<char *> cargs;
  std::vector<std::string> copy = argv;
  for (auto &a : copy) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid = fork();
  DISCO_CHECK(pid >= 0, "cannot start '", argv[0], "'");
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    execvp(cargs[0], cargs.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::string line;
  for (const auto &a : argv) line += (line.empty() ? "" : " ") + a;
  DISCO_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "'", line, "' failed",
              WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (is it installed?)" : "");
}

// Into place through a temporary name, so that readers never see half a file.
void install(const std::string &from, const std::string &to) {
  const std::string tmp = to + ".tmp" + std::to_string(getpid());
  std::error_code ec;
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  DISCO_CHECK(!ec, "cannot write '", tmp, "': ", ec.message());
  fs::rename(tmp, to, ec);
  DISCO_CHECK(!ec, "cannot write '", to, "': ", ec.message());
}

std::string size_text(int64_t bytes) {
  char b[32];
  if (bytes >= (1 << 20)) std::snprintf(b, sizeof b, "%.1f MB", bytes / 1048576.0);
  else std::snprintf(b, sizeof b, "%.1f KB", bytes / 1024.0);
  return b;
}

// The glue of the backends whose steps the plan has (extern steps such as
// "onednn.matmul": backend onednn; the host's are the Halide kernels of a CPU
// target), in the backends' order, each archive and flag once.
PlanGlue plan_glue(const Plan &plan, const std::vector<std::unique_ptr<Backend>> &backends, bool cpu) {
  PlanGlue g;
  auto add = [](std::vector<std::string> &to, const std::string &x) {
    if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
  };
  for (const auto &b : backends) {
    std::vector<const PlanStep *> steps;  // the backend's own
    for (const auto &st : plan.steps)
      if (st.extern_call.rfind(b->name() + ".", 0) == 0 || (cpu && b->name() == "host" && !st.kernel.empty()))
        steps.push_back(&st);
    if (steps.empty()) continue;
    const AotGlue glue = *b->aot_glue();
    g.backends += (g.backends.empty() ? "" : ", ") + b->name();
    if (!glue.install_function.empty()) add(g.install_functions, glue.install_function);
    for (const auto &a : glue.archives) add(g.archives, a);
    for (const auto &f : glue.link_flags) add(g.link_flags, f);
    if (g.par_for_function.empty()) {
      g.par_for_function = glue.par_for_function;
      g.par_for_threads_function = glue.par_for_threads_function;
    }
    for (const PlanStep *stp : steps) {
      const PlanStep &st = *stp;
      for (const auto &key : glue.file_params) {
        auto it = st.params.find(key);
        if (it == st.params.end()) continue;
        const std::string &file = it->second;
        // The library reads it by this name, beside NAME.a: a plain name in the compile folder.
        DISCO_CHECK(!file.empty() && file.find('/') == std::string::npos && file[0] != '.', "step ", st.label,
                    ": param '", key, "' = '", file, "' is not a file name in the compile folder");
        add(g.files, file);
      }
    }
  }
  return g;
}

// A tool's standard output.
std::string tool_output(const std::vector<std::string> &argv) {
  std::string line;
  for (const auto &a : argv) line += (line.empty() ? "'" : " '") + a + "'";  // paths the build made: no quotes in them
  FILE *p = popen(line.c_str(), "r");
  DISCO_CHECK(p, "cannot run '", line, "'");
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  DISCO_CHECK(pclose(p) == 0, "'", line, "' failed");
  return out;
}

// An archive the build made (Backend::aot_glue names its build path), or the
// copy `cmake --install` put in the install holding this code
// (installed_archive_dir.h): an installed disco, or Python module, reads its
// own install's, also when the build folder is gone or has moved on.
std::string glue_archive_path(const std::string &built) {
  if (const auto dir = installed_archive_dir()) {
    std::error_code ec;
    const fs::path installed = fs::path(*dir) / fs::path(built).filename();
    if (fs::exists(installed, ec)) return installed.string();
  }
  return built;
}

// The archives' members, extracted into `dir` as glue<i>_<member> (fixed
// names: the same bytes on every compile). Returns their names, in order.
std::vector<std::string> glue_members(const std::vector<std::string> &built_archives, const std::string &dir) {
  std::vector<std::string> names;
  std::vector<std::string> archives;
  for (const auto &a : built_archives) archives.push_back(glue_archive_path(a));
  for (size_t i = 0; i < archives.size(); ++i) {
    DISCO_CHECK(fs::exists(archives[i]), "the runtime glue '", archives[i],
                "' is missing: disco compile links the archives its build made, or an installed disco those in ",
                "its install's lib/disco (rebuild or reinstall disco)");
    std::vector<std::string> members;
    std::istringstream list(tool_output({"ar", "t", archives[i]}));
    for (std::string m; std::getline(list, m);)
      if (!m.empty()) members.push_back(m);
    std::vector<std::string> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    DISCO_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "'", archives[i],
                "' holds two members of one name; the AOT archive cannot take them apart");
    const std::string sub = dir + "/glue" + std::to_string(i);
    fs::create_directories(sub);
    run_tool({"ar", "x", fs::absolute(archives[i]).string()}, sub);
    for (const auto &m : members) {
      const std::string name = "glue" + std::to_string(i) + "_" + m;
      fs::rename(sub + "/" + m, dir + "/" + name);
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace

AotResult compile_aot(const AotOptions &opts) {
  DISCO_CHECK(is_c_identifier(opts.name), "library name '", opts.name,
              "' must be a C identifier (letters, digits, '_'; not starting with a digit): it prefixes every symbol");
  // cuda, cuda80, opencl...: the Halide target, and the GPU backend whose kernels it runs.
  const std::string expanded = expand_gpu_target(opts.target);
  const std::string gpu = gpu_api_of(expanded);
  // Every backend must bring what its steps need in a library (Backend::aot_glue).
  std::vector<std::string> backend_names = opts.backends;
  if (!gpu.empty() && backend_names == std::vector<std::string>{"host"}) backend_names = {gpu};
  const auto backends = make_backends(backend_names);
  for (const auto &b : backends)
    DISCO_CHECK(b->aot_glue(), "backend '", b->name(), "' cannot go into AOT libraries yet (use --targets ",
                "with other backends, or disco run for ", b->name(), ")");
  const std::string target = parse_target(expanded).to_string();  // a bad target fails before any work
  auto progress = [&](const std::string &line) {
    if (opts.progress) opts.progress(line);
  };
  progress("parsing " + opts.model);
  ModelSource src = load_model_source(opts.model);
  CompileOptions co;
  co.target = expanded;
  co.backends = backend_names;
  co.hints = opts.hints;
  co.compile_workers = opts.compile_workers;
  co.use_cache = false;
  co.keep_objects = true;
  co.progress = opts.progress;
  co.kernel_progress = opts.kernel_progress;
  CompiledModel m = compile_graph(std::move(src.graph), opts.name, src.key, co);
  m.profile.import_s = src.seconds;
  check_plan_supported(m.plan);
  const PlanGlue glue = plan_glue(m.plan, backends, gpu.empty());
  progress("compile profile:");
  const std::string phases = m.profile.describe("  ");
  for (size_t at = 0, end; at < phases.size(); at = end + 1) {
    end = phases.find('\n', at);
    if (end == std::string::npos) end = phases.size();
    progress(phases.substr(at, end - at));
  }

  const std::string &dir = m.dir;  // private to this compile, removed at exit
  const std::string header = opts.name + ".h";
  HeaderInfo info{opts.name, fs::path(opts.model).filename().string(), target, link_flags(glue.link_flags)};
  write_file(dir + "/" + header, header_source(m.plan, info));
  write_file(dir + "/" + opts.name + ".pc", pkg_config_source(opts.name, info.model, target, info.link_flags));
  progress("generating the driver (" + std::to_string(m.plan.steps.size()) + " steps)");
  write_file(dir + "/" + opts.name + "_driver.c", driver_source(m.plan, opts.name, header, gpu, glue.install_functions, glue.par_for_threads_function));
  progress("compiling the driver");
  run_tool({"cc", "-std=gnu11", "-O2", "-fPIC", "-c", opts.name + "_driver.c", "-o", opts.name + "_driver.o"}, dir);
  std::vector<std::string> members = {opts.name + "_driver.o"};
  if (!m.plan.constants.empty()) {
    write_file(dir + "/" + opts.name + "_constants.S", constants_asm(opts.name, m.plan.constants));
    run_tool({"cc", "-c", opts.name + "_constants.S", "-o", opts.name + "_constants.o"}, dir);
    members.push_back(opts.name + "_constants.o");
  }
  if (!glue.archives.empty()) {
    progress("adding the runtime glue of " + glue.backends);
    for (const auto &member : glue_members(glue.archives, dir)) members.push_back(member);
  }
  int kernels = 0;
  for (size_t i = 0; i < m.objects.size(); ++i) {
    const bool runtime = i + 1 == m.objects.size();
    const std::string member = runtime ? "halide_runtime.o" : fs::path(m.objects[i]).filename().string();
    if (runtime) fs::copy_file(m.objects[i], dir + "/" + member, fs::copy_options::overwrite_existing);
    // The kernels' parallel loops on the glue's pool, in this library only.
    if (!runtime && !glue.par_for_function.empty())
      run_tool({"objcopy", "--redefine-sym", "halide_do_par_for=" + glue.par_for_function, member}, dir);
    members.push_back(member);
    kernels += runtime ? 0 : 1;
  }
  progress("linking " + opts.name + ".a (" + std::to_string(kernels) + " kernels, the driver" +
           (m.plan.constants.empty() ? "" : ", the constants") + ", Halide's runtime)");
  std::vector<std::string> ar = {"ar", "rcsD", opts.name + ".a"};
  ar.insert(ar.end(), members.begin(), members.end());
  run_tool(ar, dir);

  std::error_code ec;
  fs::create_directories(opts.out_dir.empty() ? "." : opts.out_dir, ec);
  DISCO_CHECK(!ec, "cannot create directory '", opts.out_dir, "': ", ec.message());
  AotResult r;
  const std::string base = (opts.out_dir.empty() ? "." : opts.out_dir) + "/" + opts.name;
  r.archive = base + ".a";
  r.header = base + ".h";
  r.pkg_config = base + ".pc";
  install(dir + "/" + opts.name + ".a", r.archive);
  install(dir + "/" + header, r.header);
  install(dir + "/" + opts.name + ".pc", r.pkg_config);
  for (const auto &file : glue.files) {
    DISCO_CHECK(fs::exists(dir + "/" + file), "a step names '", file, "', which its backend did not write");
    r.files.push_back((opts.out_dir.empty() ? "." : opts.out_dir) + "/" + file);
    install(dir + "/" + file, r.files.back());
  }
  r.archive_bytes = static_cast<int64_t>(fs::file_size(r.archive));
  r.kernels = kernels;
  r.profile = m.profile;
  progress("wrote " + r.archive + " (" + size_text(r.archive_bytes) + ", " + std::to_string(kernels) +
           " kernels), " + r.header + " and " + r.pkg_config);
  for (const auto &file : r.files) progress("wrote " + file);
  return r;
}

}  // namespace disco::aot
