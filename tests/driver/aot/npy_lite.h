// A minimal .npy reader for the AOT harness, which links nothing of disco:
// little-endian, C order, the dtypes the models use.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace npy_lite {

struct Array {
  std::string descr;  // "<f4", "<i8", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t elements() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

inline Array read(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string data = ss.str();
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + " is not .npy");
  const int major = static_cast<unsigned char>(data[6]);
  size_t header_len, start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) | static_cast<unsigned char>(data[9]) << 8;
    start = 10;
  } else {
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    start = 12;
  }
  const std::string header = data.substr(start, header_len);
  Array a;
  auto field = [&](const std::string &key) {
    size_t p = header.find("'" + key + "'");
    if (p == std::string::npos) throw std::runtime_error(path + ": no " + key);
    return header.substr(header.find(':', p) + 1);
  };
  std::string d = field("descr");
  a.descr = d.substr(d.find('\'') + 1);
  a.descr = a.descr.substr(0, a.descr.find('\''));
  if (field("fortran_order").find("True") < field("fortran_order").find(',')) throw std::runtime_error(path + ": Fortran order");
  std::string s = field("shape");
  s = s.substr(s.find('(') + 1, s.find(')') - s.find('(') - 1);
  std::stringstream dims(s);
  for (std::string item; std::getline(dims, item, ',');)
    if (item.find_first_not_of(' ') != std::string::npos) a.shape.push_back(std::stoll(item));
  a.bytes.assign(data.begin() + static_cast<long>(start + header_len), data.end());
  return a;
}

}  // namespace npy_lite
