#include "frontend/file_util.h"

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

}  // namespace disco
