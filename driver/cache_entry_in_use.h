// A compile cache entry that this process is using (issue #23): its folder
// held open with a shared lock (flock) from the moment it is found until the
// CompiledModel that found it is gone. The eviction (driver/compile_cache.h)
// takes an exclusive lock, without waiting, before it moves an entry away,
// and skips the entries it cannot lock; so files do not vanish between
// finding an entry and loading its plan, kernel library and constants (with
// a cache bound of 0, another process's compile used to remove them there).
// Eviction that ran before the lock was taken shows as a folder that is gone
// or another folder at the same path: a cache miss, not an error.
#pragma once
#include <memory>
#include <string>

namespace disco {

class CacheEntryInUse {
 public:
  // Marks the folder at `dir` in use; nullptr when no folder is there or it
  // was moved away before the lock was taken.
  static std::shared_ptr<const CacheEntryInUse> mark(const std::string &dir);
  ~CacheEntryInUse();
  CacheEntryInUse(const CacheEntryInUse &) = delete;
  CacheEntryInUse &operator=(const CacheEntryInUse &) = delete;

  // Whether `path` names the folder marked, and not another one renamed there since.
  bool is_at(const std::string &path) const;

 private:
  explicit CacheEntryInUse(int fd) : fd_(fd) {}
  int fd_;  // the folder, open and locked
};

// Whether the folder at `path` is the one open as `fd`.
bool same_folder(int fd, const std::string &path);

}  // namespace disco
