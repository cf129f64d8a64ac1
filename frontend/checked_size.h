// Sizes of tensors, computed without overflow, and the memory limit they are
// checked against before anything is allocated (issue #23). One helper serves
// shape products, initializers, .npy headers, folded constants and the
// executor's buffers, so a hostile dim gives a message naming what is being
// sized instead of a wrapped product, std::bad_alloc or a hang.
#pragma once
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "frontend/dtype.h"
#include "frontend/errors.h"

namespace disco {

// "[2, 128, 768]"
inline std::string dims_text(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// "300 bytes", "16 MiB", "1.5 GiB": binary units, at most one decimal.
inline std::string bytes_text(int64_t bytes) {
  static const char *kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v == static_cast<double>(static_cast<int64_t>(v)) ? "%.0f %s" : "%.1f %s", v,
                kUnits[u]);
  return buf;
}

// The element count of `shape`; nothing on a negative dim or a count above
// 2^63-1. For code that decides something from a count (few enough to compile
// in, to fold) and treats a count too large to hold as "too many".
inline std::optional<int64_t> element_count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0) return std::nullopt;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

// The element count of `shape`. Fails naming `what` (e.g. "initializer 'w'")
// on a negative dim or a count above 2^63-1.
inline int64_t checked_elements(const std::vector<int64_t> &shape, const std::string &what) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    DISCO_CHECK(shape[i] >= 0, what, " has a negative dim ", i, " (", shape[i], ") in shape ", dims_text(shape));
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      fail(what, " of shape ", dims_text(shape), " has more than 2^63 elements");
  return n;
}

// The product of dims [begin, end) of `shape`: a part of a tensor's shape,
// such as the dims before an axis. It may pass 2^63 where the whole does not,
// when a dim outside it is 0; then it fails naming `what`.
inline int64_t checked_dims_product(const std::vector<int64_t> &shape, size_t begin, size_t end,
                                    const std::string &what) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    if (shape[i] < 0 || __builtin_mul_overflow(n, shape[i], &n))
      fail(what, " of shape ", dims_text(shape), ": the product of its dims ", begin, " to ", end - 1,
           " is negative or above 2^63-1");
  return n;
}

// The byte size of a `t` tensor of `shape`; nothing exactly where
// checked_bytes fails (a negative dim, a count or size above 2^63-1: the same
// products in the same order). The executor's per-run fast path: no message
// is built unless it fails, and then checked_bytes says why.
inline std::optional<int64_t> tensor_bytes(const std::vector<int64_t> &shape, DType t) {
  std::optional<int64_t> n = element_count(shape);
  if (n && __builtin_mul_overflow(*n, static_cast<int64_t>(dtype_size(t)), &*n)) return std::nullopt;
  return n;
}

// The byte size of a `t` tensor of `shape`, checked like checked_elements.
inline int64_t checked_bytes(const std::vector<int64_t> &shape, DType t, const std::string &what) {
  int64_t n = checked_elements(shape, what), bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(t)), &bytes))
    fail(what, " of shape ", dims_text(shape), " needs more than 2^63 bytes");
  return bytes;
}

// The most elements a buffer of a Halide kernel holds. Kernels are compiled
// without Halide's large_buffers feature: their index arithmetic is 32-bit,
// and Halide refuses a larger buffer with its own text, at compile time ("may
// be accessed in an unbounded way") or from the kernel ("Total allocation for
// buffer ... exceeds the maximum size"). Its dims are 32-bit too.
constexpr int64_t kMaxKernelBufferElements = INT32_MAX;

// Fails when `what` of `shape` has more elements than a kernel's buffer holds:
// "value 'y' of shape [32768, 65536, 1] has 2147483648 elements, above the
// 2147483647 that a kernel's buffer can hold". `shape` has passed
// checked_elements (or tensor_bytes).
inline void check_kernel_buffer_elements(const std::string &what, const std::vector<int64_t> &shape) {
  const int64_t n = checked_elements(shape, what);
  if (n > kMaxKernelBufferElements)
    fail(what, " of shape ", dims_text(shape), " has ", n, " elements, above the ", kMaxKernelBufferElements,
         " that a kernel's buffer can hold");
}

// A non-negative decimal integer below 2^63 ("1024"); nothing for anything
// else (a sign, spaces, too many digits). Shape dims from text go through it.
inline std::optional<int64_t> parse_count(const std::string &text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int64_t v = 0;
  for (char c : text)
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) return std::nullopt;
  return v;
}

// "8G", "512M", "64K", "1048576" (bytes): the value of DISCO_MAX_MEMORY or a
// limit option; nothing when malformed, zero or too large.
inline std::optional<int64_t> parse_byte_size(const std::string &text) {
  const size_t digits = text.find_first_not_of("0123456789");
  const auto v = parse_count(text.substr(0, digits));
  if (!v) return std::nullopt;
  const std::string unit = digits == std::string::npos ? "" : text.substr(digits);
  int shift = 0;
  if (unit == "K" || unit == "k" || unit == "KiB") shift = 10;
  else if (unit == "M" || unit == "m" || unit == "MiB") shift = 20;
  else if (unit == "G" || unit == "g" || unit == "GiB") shift = 30;
  else if (unit == "T" || unit == "t" || unit == "TiB") shift = 40;
  else if (!unit.empty()) return std::nullopt;
  if (*v <= 0 || *v > (INT64_MAX >> shift)) return std::nullopt;
  return *v << shift;
}

// The most bytes one run may hold in one value (and in its intermediate
// values together): a buffer above it is refused before it is allocated.
struct MemoryLimit {
  int64_t bytes = INT64_MAX;
  std::string source;  // how it was set, for the message: "DISCO_MAX_MEMORY", "physical memory", ...

  // Fails when `what` of `shape` needs more than the limit:
  // "value 'y' of shape [1048576, 1048576, 4] needs 16 TiB, above the memory limit of 120 GiB (physical memory)".
  void check(const std::string &what, const std::vector<int64_t> &shape, DType t) const {
    check_bytes(what, shape, checked_bytes(shape, t, what));
  }
  void check_bytes(const std::string &what, const std::vector<int64_t> &shape, int64_t needed) const {
    if (needed > bytes)
      fail(what, " of shape ", dims_text(shape), " needs ", bytes_text(needed), ", above the memory limit of ",
           bytes_text(bytes), " (", source, ")");
  }
};

// The limit for `bytes` given by an option (0: not given): the option, else
// $DISCO_MAX_MEMORY, else the machine's physical memory.
inline MemoryLimit memory_limit(int64_t bytes = 0) {
  if (bytes > 0) return {bytes, "set by the max_memory option"};
  if (const char *env = std::getenv("DISCO_MAX_MEMORY"); env && *env) {
    auto v = parse_byte_size(env);
    DISCO_CHECK(v, "DISCO_MAX_MEMORY='", env, "' is not a size in bytes (e.g. 8G, 512M, 1048576)");
    return {*v, "DISCO_MAX_MEMORY"};
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return {INT64_MAX, "no limit: physical memory unknown; set DISCO_MAX_MEMORY"};
  return {static_cast<int64_t>(pages) * page, "physical memory; set DISCO_MAX_MEMORY to change it"};
}

}  // namespace disco
