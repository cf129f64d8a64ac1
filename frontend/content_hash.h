// Content hashes for compile-cache keys. FNV-1a is enough: keys only need to
// tell inputs apart, not resist an adversary.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace disco {

// 16 hex digits: how cache keys and checksums are written.
inline std::string hex64(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

class ContentHash {
 public:
  ContentHash &add(const void *data, size_t n) {
    const auto *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 1099511628211ull;
    return *this;
  }
  ContentHash &add(const std::string &s) { return add(s.data(), s.size()); }
  uint64_t value() const { return h_; }
  std::string hex() const { return hex64(h_); }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

}  // namespace disco
