#include "driver/compile_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "driver/cache_entry_in_use.h"

namespace disco {

namespace fs = std::filesystem;

namespace {

// A new, empty tmp-<why>-XXXXXX folder in `root` for an entry to be renamed
// onto (rename replaces an empty folder); "" when it cannot be made.
std::string aside_folder(const std::string &root, const std::string &why) {
  std::string away = root + "/tmp-" + why + "-XXXXXX";
  return mkdtemp(away.data()) ? away : "";
}

// Moves the entry at `dir` aside and removes it, unless a process has it in
// use (a shared lock: driver/cache_entry_in_use.h). The exclusive lock is
// held across the rename, so no process marks the entry in use meanwhile;
// one waiting for its lock then finds the path empty or another folder there.
bool evict_unless_in_use(const std::string &root, const fs::path &dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  // EWOULDBLOCK: in use. Any other failure: a file system without locks, where
  // the entry goes as it did before the marks.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(fd);
    return false;
  }
  const std::string away = same_folder(fd, dir) ? aside_folder(root, "evicted") : "";
  const bool moved = !away.empty() && std::rename(dir.c_str(), away.c_str()) == 0;
  ::close(fd);
  std::error_code ec;
  if (!away.empty()) fs::remove_all(away, ec);  // the entry, or the unused empty folder
  return moved;
}

}  // namespace

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
    // Entries are NAME-HASH folders; tmp-* folders belong to compiles in flight
    // (and to entries being removed), sources/ remembers model files' keys
    // (driver/source_index.h).
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
    if (evict_unless_in_use(root, e.path)) {
      total -= e.bytes;
      ++removed;
    }
  }
  return removed;
}

void discard_cache_entry(const std::string &root, const std::string &dir, const CacheEntryInUse &verified) {
  const std::string away = aside_folder(root, "damaged");
  if (away.empty()) return;
  std::error_code ec;
  // Fails when another process discarded or evicted it first.
  if (std::rename(dir.c_str(), away.c_str()) == 0 && !verified.is_at(away)) {
    // Not the entry found damaged: another process's fresh compile took its
    // place after it went. Back it goes (unless yet another took the place).
    if (std::rename(away.c_str(), dir.c_str()) == 0) return;
  }
  fs::remove_all(away, ec);
}

}  // namespace disco
