#include "driver/cache_entry_in_use.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace disco {

bool same_folder(int fd, const std::string &path) {
  struct stat open_st, path_st;
  return ::fstat(fd, &open_st) == 0 && ::stat(path.c_str(), &path_st) == 0 && open_st.st_dev == path_st.st_dev &&
         open_st.st_ino == path_st.st_ino;
}

std::shared_ptr<const CacheEntryInUse> CacheEntryInUse::mark(const std::string &dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  // Waits only while an eviction holds the entry to move it away. A file
  // system without locks (some network ones) leaves the entry unmarked: the
  // eviction there removes entries as it did before the marks.
  while (::flock(fd, LOCK_SH) != 0 && errno == EINTR) {
  }
  std::shared_ptr<const CacheEntryInUse> in_use(new CacheEntryInUse(fd));
  return in_use->is_at(dir) ? in_use : nullptr;
}

CacheEntryInUse::~CacheEntryInUse() { ::close(fd_); }

bool CacheEntryInUse::is_at(const std::string &path) const { return same_folder(fd_, path); }

}  // namespace disco
