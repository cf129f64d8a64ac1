#include "targets/kernel_store.h"

#include <unistd.h>
#include <utime.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "frontend/content_hash.h"
#include "frontend/file_checksum.h"
#include "frontend/file_util.h"

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

// A key file: "checksum <object's checksum> key <hash of the key>\n" and the key.
// The key's hash finds a key file whose bytes were changed.
struct KeyFile {
  std::string checksum;
  std::string key;
};

std::string key_file_text(const std::string &checksum, const std::string &key) {
  return "checksum " + checksum + " key " + ContentHash().add(key).hex() + "\n" + key;
}

std::optional<KeyFile> parse_key_file(const std::string &text) {
  const size_t eol = text.find('\n');
  if (eol != 46 || text.compare(0, 9, "checksum ") != 0 || text.compare(25, 5, " key ") != 0) return std::nullopt;
  KeyFile k{text.substr(9, 16), text.substr(eol + 1)};
  if (ContentHash().add(k.key).hex() != text.substr(30, 16)) return std::nullopt;
  return k;
}

}  // namespace

std::string KernelStore::kernel_name(const std::string &key) { return "k_" + ContentHash().add(key).hex(); }

bool KernelStore::fetch(const std::string &name, const std::string &key, const std::string &object_path) const {
  auto damaged = [&](const std::string &problem) {
    if (warn_) warn_("the compile cache entry '" + dir_ + "/" + name + "' is damaged (" + problem + "); compiling it again");
    return false;
  };
  std::string text;
  if (!read_text(dir_ + "/" + name + ".key", text)) return false;  // not stored, or gone with an evicted store
  const auto stored = parse_key_file(text);
  if (!stored) return damaged("'" + name + ".key' is damaged");  // publish replaces it
  if (stored->key != key) return false;  // another key with the same hash: compiled, and published in its place
  const std::string object = name + "-" + stored->checksum + ".o";
  const std::string path = dir_ + "/" + object;
  if (!file_exists(path)) return false;  // removed (a damaged one, below) or gone with an evicted store
  const auto sum = file_checksum(path);
  if (!sum || hex64(*sum) != stored->checksum) {
    std::error_code ec;
    fs::remove(path, ec);  // whoever compiles it next publishes a whole one
    return damaged("'" + object + "' does not match its checksum");
  }
  if (!place(path, object_path)) return false;
  utime(dir_.c_str(), nullptr);  // used: the LRU eviction keeps it
  return true;
}

void KernelStore::publish(const std::string &name, const std::string &key, const std::string &object_path) const {
  static std::atomic<int> publishes{0};  // several threads of one process may publish at once
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return;
  const auto sum = file_checksum(object_path);
  if (!sum) return;
  const std::string tmp =
      dir_ + "/tmp-" + std::to_string(::getpid()) + "-" + std::to_string(publishes++) + "-" + name;
  if (!place(object_path, tmp + ".o")) return;
  {
    std::ofstream f(tmp + ".key", std::ios::binary);
    f << key_file_text(hex64(*sum), key);
    if (!f.good()) {
      fs::remove(tmp + ".o", ec);
      fs::remove(tmp + ".key", ec);
      return;
    }
  }
  // Object first: whoever finds the key finds the object it names.
  const std::string object = dir_ + "/" + name + "-" + hex64(*sum) + ".o";
  if (std::rename((tmp + ".o").c_str(), object.c_str()) != 0 ||
      std::rename((tmp + ".key").c_str(), (dir_ + "/" + name + ".key").c_str()) != 0) {
    fs::remove(tmp + ".o", ec);
    fs::remove(tmp + ".key", ec);
    return;
  }
  utime(dir_.c_str(), nullptr);
}

}  // namespace disco
