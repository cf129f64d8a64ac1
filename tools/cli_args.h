// A small argument parser for the disco tools: positional arguments, flags
// and repeatable --name VALUE / --name=VALUE options, with usage errors that
// say which option is wrong.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace disco {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CliArgs {
 public:
  // `flags` take no value; `options` take one and may repeat.
  CliArgs(int argc, char **argv, int first, const std::set<std::string> &flags,
          const std::set<std::string> &options);
  bool flag(const std::string &name) const { return flags_.count(name) != 0; }
  std::vector<std::string> all(const std::string &name) const;
  std::string get(const std::string &name, const std::string &dflt) const;
  int get_int(const std::string &name, int dflt) const;
  double get_double(const std::string &name, double dflt) const;
  // A size in bytes ("8G", "512M", "64K", "1048576"), as DISCO_MAX_MEMORY takes.
  int64_t get_byte_size(const std::string &name, int64_t dflt) const;
  const std::vector<std::string> &positional() const { return positional_; }

 private:
  std::set<std::string> flags_;
  std::map<std::string, std::vector<std::string>> options_;
  std::vector<std::string> positional_;
};

// "x=2x128x768" -> {"x", "2x128x768"}; throws UsageError naming the option.
std::pair<std::string, std::string> split_assignment(const std::string &text, const std::string &option);
// "2x128x768"; throws UsageError naming `option` (e.g. "--shape x") and the dim
// on a malformed dim or one above 2^63-1.
std::vector<int64_t> parse_shape(const std::string &text, const std::string &option = "");
// "onednn,host" -> {"onednn", "host"}; throws UsageError on an empty name.
std::vector<std::string> parse_backend_list(const std::string &text);

}  // namespace disco
