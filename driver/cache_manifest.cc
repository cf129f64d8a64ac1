#include "driver/cache_manifest.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "frontend/errors.h"
#include "frontend/content_hash.h"
#include "frontend/file_checksum.h"

namespace disco {

namespace fs = std::filesystem;

namespace {

constexpr const char *kManifest = "manifest.txt";

// What says a file is the one written: its inode and its change time, which
// every write, truncation or rename onto it moves and no user call can set.
std::string identity(const struct stat &st) {
  return std::to_string(st.st_ino) + " " + std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

}  // namespace

void write_cache_manifest(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != kManifest) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string text = "disco cache manifest 2\n";
  for (const auto &name : names) {
    const std::string path = dir + "/" + name;
    const auto sum = file_checksum(path);
    struct stat st;
    DISCO_CHECK(sum && ::stat(path.c_str(), &st) == 0, "cannot read '", path, "' to checksum it");
    text += name + " " + std::to_string(st.st_size) + " " + hex64(*sum) + " " + identity(st) + "\n";
  }
  std::ofstream f(dir + "/" + kManifest, std::ios::binary);
  f << text;
  DISCO_CHECK(f.good(), "cannot write '", dir, "/", kManifest, "'");
}

std::optional<std::string> verify_cache_manifest(const std::string &dir) {
  std::ifstream f(dir + "/" + kManifest, std::ios::binary);
  if (!f) return std::string("it has no ") + kManifest;
  std::string line;
  if (!std::getline(f, line) || line != "disco cache manifest 2") return std::string(kManifest) + " is not one";
  std::map<std::string, bool> listed;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string name, sum, ino, ctime;
    uint64_t size = 0;
    // A name with a '/' reaches outside the entry, and a file that is not a regular one (such
    // as /dev/zero, seen while writing fuzz/fuzz_plan_cache) would be read without end.
    if (!(in >> name >> size >> sum >> ino >> ctime) || name.find('/') != std::string::npos)
      return std::string(kManifest) + " is damaged";
    listed[name] = true;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "'" + name + "' is missing";
    if (static_cast<uint64_t>(st.st_size) != size)
      return "'" + name + "' has " + std::to_string(st.st_size) + " bytes, not " + std::to_string(size);
    // The same file, untouched since the manifest was written: its bytes are
    // those checksummed then (checking 300 MB of weights again would cost a
    // warm start most of its 0.1 s). Any other file is checksummed now.
    if (identity(st) == ino + " " + ctime) continue;
    const auto h = file_checksum(path);
    if (!h || hex64(*h) != sum) return "'" + name + "' does not match its checksum";
  }
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().filename() != kManifest && !listed.count(e.path().filename().string()))
      return "'" + e.path().filename().string() + "' is not in " + kManifest;
  return std::nullopt;
}

}  // namespace disco
