#include "tests/support/model_files.h"

#include <sys/stat.h>

namespace disco::testing {

namespace {
bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}
}  // namespace

std::string shared_models_dir() {
  std::string d = std::string(DISCO_SOURCE_DIR) + "/../shared/models";
  return exists(d + "/manifest.json") ? d : "";
}

std::string references_dir() { return std::string(DISCO_SOURCE_DIR) + "/tests/references"; }

std::string find_model(const std::string &name) {
  for (const std::string &dir : {shared_models_dir(), std::string(DISCO_SOURCE_DIR) + "/examples/models"}) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name + ".onnx";
    if (exists(p)) return p;
  }
  return "";
}

}  // namespace disco::testing
