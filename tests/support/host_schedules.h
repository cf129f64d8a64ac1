// Test support: a graph compiled for the host backend alone, with the
// schedule each kernel got ("loop, branches: small dense", as --verbose
// prints it), for the schedule template tests.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "driver/compile_model.h"

namespace disco::testing {

struct HostCompiled {
  CompiledModel model;
  std::vector<std::string> schedules;  // one per kernel, in plan order
};

inline HostCompiled compile_on_host(Graph g, const std::string &name, std::map<std::string, int64_t> hints = {}) {
  CompileOptions o;
  o.use_cache = false;
  o.backends = {"host"};
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
