#include "targets/kernel_store.h"

#include <unistd.h>
#include <utime.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/content_hash.h"
#include "frontend/file_checksum.h"

namespace disco {

namespace fs = std::filesystem;

namespace {

bool read_text(const std::string &path, std::string &out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  out = s.str();
  return f.good() || f.eof();
}

// A link where the file system allows it (the store and the compile folder
// share the cache root), else a copy.
bool place(const std::string &from, const std::string &to) {
  std::error_code ec;
  fs::remove(to, ec);
  if (::link(from.c_str(), to.c_str()) == 0) return true;
  return fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec) && !ec;
}

}  // namespace

std::string KernelStore::kernel_name(const std::string &key) { return "k_" + ContentHash().add(key).hex(); }

bool KernelStore::fetch(const std::string &name, const std::string &key, const std::string &object_path) const {
  std::string stored;
  if (!read_text(dir_ + "/" + name + ".key", stored)) return false;
  // "checksum <hex>\n" and the key: the object must be the one compiled for this key.
  const size_t eol = stored.find('\n');
  if (eol == std::string::npos || stored.compare(0, 9, "checksum ") != 0 || stored.compare(eol + 1, std::string::npos, key) != 0)
    return false;
  const auto sum = file_checksum(dir_ + "/" + name + ".o");
  if (!sum || stored.substr(9, eol - 9) != hex64(*sum)) return false;  // damaged: compiled again, and replaced
  if (!place(dir_ + "/" + name + ".o", object_path)) return false;
  utime(dir_.c_str(), nullptr);  // used: the LRU eviction keeps it
  return true;
}

void KernelStore::publish(const std::string &name, const std::string &key, const std::string &object_path) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return;
  const auto sum = file_checksum(object_path);
  if (!sum) return;
  const std::string tmp = dir_ + "/tmp-" + std::to_string(::getpid()) + "-" + name;
  if (!place(object_path, tmp + ".o")) return;
  {
    std::ofstream f(tmp + ".key", std::ios::binary);
    f << "checksum " << hex64(*sum) << "\n" << key;
    if (!f.good()) {
      fs::remove(tmp + ".o", ec);
      fs::remove(tmp + ".key", ec);
      return;
    }
  }
  // Object first: whoever finds the key finds the object it names.
  if (std::rename((tmp + ".o").c_str(), (dir_ + "/" + name + ".o").c_str()) != 0 ||
      std::rename((tmp + ".key").c_str(), (dir_ + "/" + name + ".key").c_str()) != 0) {
    fs::remove(tmp + ".o", ec);
    fs::remove(tmp + ".key", ec);
    return;
  }
  utime(dir_.c_str(), nullptr);
}

}  // namespace disco
