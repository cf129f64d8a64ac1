// A minimal reader for the float32 .npy files the example checks against
// (C order, little endian), so that the example needs nothing but the model.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

struct NpyArray {
  std::vector<int64_t> shape;  // ONNX order, outermost first
  std::vector<float> data;
};

inline NpyArray read_npy_f32(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  char magic[8];
  f.read(magic, 8);
  if (!f || std::string(magic, 6) != "\x93NUMPY") throw std::runtime_error(path + ": not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    f.read(reinterpret_cast<char *>(b), 2);
    header_len = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    f.read(reinterpret_cast<char *>(b), 4);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  std::string header(header_len, '\0');
  f.read(&header[0], header_len);
  if (header.find("'<f4'") == std::string::npos) throw std::runtime_error(path + ": not float32 little endian");
  if (header.find("'fortran_order': False") == std::string::npos) throw std::runtime_error(path + ": not C order");
  size_t open = header.find('(', header.find("'shape'"));
  size_t close = header.find(')', open);
  NpyArray a;
  std::stringstream dims(header.substr(open + 1, close - open - 1));
  std::string dim;
  int64_t count = 1;
  while (std::getline(dims, dim, ',')) {
    if (dim.find_first_not_of(' ') == std::string::npos) continue;
    a.shape.push_back(std::stoll(dim));
    count *= a.shape.back();
  }
  a.data.resize(count);
  f.read(reinterpret_cast<char *>(a.data.data()), count * sizeof(float));
  if (!f) throw std::runtime_error(path + ": shorter than its shape says");
  return a;
}
