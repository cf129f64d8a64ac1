#include "driver/compile_cache.h"

#include <sys/stat.h>
#include <utime.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace disco {

namespace fs = std::filesystem;

void touch_cache_entry(const std::string &dir) { utime(dir.c_str(), nullptr); }

uint64_t cache_limit_bytes() {
  if (const char *v = std::getenv("DISCO_CACHE_MAX_MB"); v && *v) {
    char *end = nullptr;
    unsigned long long mb = std::strtoull(v, &end, 10);
    if (*end == '\0') return static_cast<uint64_t>(mb) << 20;
  }
  return uint64_t(4096) << 20;
}

int evict_cache_entries(const std::string &root, uint64_t max_bytes, const std::string &keep) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uint64_t bytes;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(root, ec)) {
    // Entries are NAME-HASH folders; tmp-* folders belong to compiles in flight,
    // sources/ remembers model files' keys (driver/source_index.h).
    const std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || name.rfind("tmp-", 0) == 0 || name == "sources") continue;
    uint64_t bytes = 0;
    for (const auto &f : fs::directory_iterator(e.path(), ec))
      if (f.is_regular_file(ec)) bytes += f.file_size(ec);
    entries.push_back({e.path(), fs::last_write_time(e.path(), ec), bytes});
    total += bytes;
  }
  if (total <= max_bytes) return 0;
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.used < b.used; });
  int removed = 0;
  for (const auto &e : entries) {
    if (total <= max_bytes) break;
    if (e.path == fs::path(keep)) continue;
    // A process that has the library loaded keeps running: unlinking does not unmap.
    fs::remove_all(e.path, ec);
    if (!ec) {
      total -= e.bytes;
      ++removed;
    }
  }
  return removed;
}

}  // namespace disco
