// Test support: a graph compiled for the host backend alone, with the
// schedule each kernel got ("loop, branches: small dense", as --verbose
// prints it), for the schedule template tests.
#pragma once
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "driver/compile_model.h"
#include "lowering/host_target.h"
#include "targets/host/host_codegen.h"

namespace disco::testing {

struct HostCompiled {
  CompiledModel model;
  std::vector<std::string> schedules;  // one per kernel, in plan order
};

// The Halide target the template tests compile for: $DISCO_TEST_TARGET (say,
// x86-64-linux-avx-avx2-f16c-fma, to test the AVX2 variants of the templates
// on an AVX-512 host, as tests/CMakeLists.txt does), else the host.
inline std::string test_target_name() {
  const char *t = std::getenv("DISCO_TEST_TARGET");
  return t && *t ? t : "host";
}
inline Halide::Target test_target() { return parse_target(test_target_name()); }
// Whether this CPU runs code compiled for test_target().
inline bool test_target_runs_here() {
  const Halide::Target t = test_target(), host = usable_host_target();
  for (auto f : {Halide::Target::SSE41, Halide::Target::AVX, Halide::Target::AVX2, Halide::Target::FMA,
                 Halide::Target::F16C, Halide::Target::AVX512, Halide::Target::AVX512_Skylake,
                 Halide::Target::AVX512_Cannonlake, Halide::Target::AVX512_SapphireRapids})
    if (t.has_feature(f) && !host.has_feature(f)) return false;
  return true;
}
// The float32 vector lanes of test_target().
inline int test_target_lanes() { return test_target().has_feature(Halide::Target::AVX512) ? 16 : 8; }

inline HostCompiled compile_on_host(Graph g, const std::string &name, std::map<std::string, int64_t> hints = {}) {
  CompileOptions o;
  o.use_cache = false;
  o.backends = {"host"};
  o.target = test_target_name();
  o.hints = std::move(hints);
  std::vector<std::string> lines;
  o.progress = [&](const std::string &line) {
    if (line.find("  schedule ") != std::string::npos) lines.push_back(line.substr(line.find("schedule ") + 9));
  };
  HostCompiled c{compile_graph(std::move(g), name, "", o), {}};
  c.schedules = lines;
  return c;
}

}  // namespace disco::testing
