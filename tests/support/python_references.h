// Test support: reference data that a Python script (PyTorch, numpy) writes
// once per test process into a temporary folder, removed when the process
// ends. Tests read the .npy files by name.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "frontend/tensor_data.h"
#include "runtime/npy.h"

namespace disco::testing {

class PythonReferences {
 public:
  // Runs `/usr/bin/python3 DISCO_SOURCE_DIR/SCRIPT FOLDER`; `tag` names the folder.
  PythonReferences(const std::string &tag, const std::string &script) {
    path_ = (std::filesystem::temp_directory_path() / ("disco-" + tag + "-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(path_);
    const std::string cmd = "/usr/bin/python3 " + std::string(DISCO_SOURCE_DIR) + "/" + script + " " + path_;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  ~PythonReferences() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  PythonReferences(const PythonReferences &) = delete;
  PythonReferences &operator=(const PythonReferences &) = delete;

  const std::string &path() const { return path_; }
  TensorData npy(const std::string &name) const { return read_npy(path_ + "/" + name + ".npy"); }

 private:
  std::string path_;
};

}  // namespace disco::testing
