// disco::Error is the one exception type of the compiler and runtime. It carries
// a message that already names the node, op, input or dim at fault; the CLI and
// the C API catch it and print it as one line.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace disco {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string &msg) : std::runtime_error(msg) {}
};

namespace detail {
inline void append(std::ostringstream &) {}
template <typename T, typename... Rest>
void append(std::ostringstream &os, const T &v, const Rest &...rest) {
  os << v;
  append(os, rest...);
}
}  // namespace detail

// Builds a message from its pieces and throws it: fail("node ", name, ": ...").
template <typename... Args>
[[noreturn]] void fail(const Args &...args) {
  std::ostringstream os;
  detail::append(os, args...);
  throw Error(os.str());
}

#define DISCO_CHECK(cond, ...) \
  do {                         \
    if (!(cond)) ::disco::fail(__VA_ARGS__); \
  } while (0)

}  // namespace disco
