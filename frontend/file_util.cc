#include "frontend/file_util.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "frontend/errors.h"

namespace disco {

std::string read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  DISCO_CHECK(f.good(), "cannot open '", path, "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  DISCO_CHECK(f.good(), "cannot write '", path, "'");
}

bool file_exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace disco
