#include "tools/cli_args.h"

#include "frontend/checked_size.h"

namespace disco {

CliArgs::CliArgs(int argc, char **argv, int first, const std::set<std::string> &flags,
                 const std::set<std::string> &options) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (flags.count(name)) {
      if (has_value) throw UsageError("--" + name + " takes no value");
      flags_.insert(name);
    } else if (options.count(name)) {
      if (!has_value) {
        if (i + 1 >= argc) throw UsageError("--" + name + " needs a value");
        value = argv[++i];
      }
      options_[name].push_back(value);
    } else {
      throw UsageError("unknown option '" + a + "'");
    }
  }
}

std::vector<std::string> CliArgs::all(const std::string &name) const {
  auto it = options_.find(name);
  return it == options_.end() ? std::vector<std::string>{} : it->second;
}

std::string CliArgs::get(const std::string &name, const std::string &dflt) const {
  auto v = all(name);
  if (v.size() > 1) throw UsageError("--" + name + " given more than once");
  return v.empty() ? dflt : v[0];
}

int CliArgs::get_int(const std::string &name, int dflt) const {
  std::string v = get(name, "");
  if (v.empty()) return dflt;
  try {
    size_t used = 0;
    int x = std::stoi(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return x;
  } catch (const std::exception &) {
    throw UsageError("--" + name + " needs an integer, got '" + v + "'");
  }
}

double CliArgs::get_double(const std::string &name, double dflt) const {
  std::string v = get(name, "");
  if (v.empty()) return dflt;
  try {
    return std::stod(v);
  } catch (const std::exception &) {
    throw UsageError("--" + name + " needs a number, got '" + v + "'");
  }
}

int64_t CliArgs::get_byte_size(const std::string &name, int64_t dflt) const {
  std::string v = get(name, "");
  if (v.empty()) return dflt;
  auto bytes = parse_byte_size(v);
  if (!bytes) throw UsageError("--" + name + " needs a size in bytes (e.g. 8G, 512M, 1048576), got '" + v + "'");
  return *bytes;
}

std::pair<std::string, std::string> split_assignment(const std::string &text, const std::string &option) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--" + option + " expects NAME=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<int64_t> parse_shape(const std::string &text, const std::string &option) {
  const std::string where = option.empty() ? "" : option + ": ";
  std::vector<int64_t> dims;
  if (text == "scalar") return dims;
  size_t start = 0;
  while (start <= text.size()) {
    size_t x = text.find('x', start);
    std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(where + "bad shape '" + text + "' (expected e.g. 2x128x768)");
    const auto dim = parse_count(part);
    if (!dim)
      throw UsageError(where + "shape '" + text + "' dim " + std::to_string(dims.size()) + " is " + part +
                       ", above 2^63-1");
    dims.push_back(*dim);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return dims;
}

std::vector<std::string> parse_backend_list(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) throw UsageError("--targets '" + text + "' has an empty backend name");
    out.push_back(name);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace disco
