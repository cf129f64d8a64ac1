#include "driver/source_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/content_hash.h"

namespace disco {

namespace {

// The identity of the file at `path` now, as one line; "" when it cannot be examined.
std::string identity(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) return "";
  std::ostringstream s;
  s << abs << ' ' << st.st_dev << ' ' << st.st_ino << ' ' << st.st_size << ' ' << st.st_mtim.tv_sec << '.'
    << st.st_mtim.tv_nsec << ' ' << st.st_ctim.tv_sec << '.' << st.st_ctim.tv_nsec;
  return s.str();
}

std::string index_file(const std::string &root, const std::string &id) {
  const size_t space = id.find(' ');  // one file per path: a changed file replaces its line
  return root + "/sources/" + ContentHash().add(id.substr(0, space)).hex();
}

}  // namespace

std::string remembered_content_key(const std::string &root, const std::string &path) {
  const std::string id = identity(path);
  if (id.empty()) return "";
  std::ifstream f(index_file(root, id));
  std::string line, key;
  if (!std::getline(f, line) || line != id || !std::getline(f, key)) return "";
  return key;
}

void remember_content_key(const std::string &root, const std::string &path, const std::string &key) {
  const std::string id = identity(path);
  if (id.empty() || key.empty()) return;
  const std::string file = index_file(root, id);
  std::error_code ec;
  std::filesystem::create_directories(root + "/sources", ec);
  const std::string tmp = file + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    f << id << '\n' << key << '\n';
    if (!f.good()) return;
  }
  std::rename(tmp.c_str(), file.c_str());  // whole or not at all for concurrent readers
}

}  // namespace disco
