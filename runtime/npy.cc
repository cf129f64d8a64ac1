#include "runtime/npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "frontend/checked_size.h"
#include "frontend/errors.h"

namespace disco {

namespace {

struct Descr {
  const char *text;
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", DType::F32}, {"<f2", DType::F16}, {"<f8", DType::F64}, {"|i1", DType::I8},  {"<i2", DType::I16},
    {"<i4", DType::I32}, {"<i8", DType::I64}, {"|u1", DType::U8},  {"<u2", DType::U16}, {"<u4", DType::U32},
    {"<u8", DType::U64}, {"|b1", DType::Bool},
};

std::string field(const std::string &header, const std::string &key, const std::string &path) {
  size_t k = header.find("'" + key + "'");
  DISCO_CHECK(k != std::string::npos, "'", path, "': .npy header has no '", key, "'");
  size_t colon = header.find(':', k);
  DISCO_CHECK(colon != std::string::npos, "'", path, "': bad .npy header");
  return header.substr(colon + 1);
}

// `t`'s bytes, which hold its shape in Fortran order (first index
// fastest), as a tensor of that shape in C order.
TensorData c_order_from_fortran(const TensorData &t) {
  const size_t rank = t.shape.size(), elem = dtype_size(t.dtype);
  const int64_t n = t.num_elements();
  if (rank < 2 || n == 0) return t;  // the same bytes either way
  TensorData c(t.dtype, t.shape);
  std::vector<int64_t> fstride(rank, 1), idx(rank, 0);
  for (size_t i = 1; i < rank; ++i) fstride[i] = fstride[i - 1] * t.shape[i - 1];
  const auto *src = static_cast<const uint8_t *>(t.data());
  auto *dst = static_cast<uint8_t *>(c.mutable_data());
  int64_t from = 0;  // the Fortran offset of idx
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * elem, src + from * elem, elem);
    for (size_t i = rank; i-- > 0;) {  // C-order odometer: the last index fastest
      if (++idx[i] < t.shape[i]) {
        from += fstride[i];
        break;
      }
      from -= fstride[i] * (t.shape[i] - 1);
      idx[i] = 0;
    }
  }
  return c;
}

}  // namespace

TensorData read_npy(const std::string &path, const MemoryLimit &limit) {
  std::ifstream f(path, std::ios::binary);
  DISCO_CHECK(f.good(), "cannot open '", path, "'");
  char magic[8];
  f.read(magic, 8);
  DISCO_CHECK(f.gcount() == 8 && std::memcmp(magic, "\x93NUMPY", 6) == 0, "'", path, "' is not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    uint8_t b[2];
    f.read(reinterpret_cast<char *>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else {
    uint8_t b[4];
    f.read(reinterpret_cast<char *>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  }
  DISCO_CHECK(f.good() && hlen < (1u << 20), "'", path, "': truncated .npy header");
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  DISCO_CHECK(f.good(), "'", path, "': truncated .npy header");

  std::string descr = field(header, "descr", path);
  size_t q1 = descr.find('\''), q2 = descr.find('\'', q1 + 1);
  DISCO_CHECK(q1 != std::string::npos && q2 != std::string::npos, "'", path, "': bad descr");
  std::string d = descr.substr(q1 + 1, q2 - q1 - 1);
  if (d == "<b1" || d == "?") d = "|b1";
  if (d == "<i1") d = "|i1";
  if (d == "<u1") d = "|u1";
  DType dtype = DType::Undefined;
  for (const auto &x : kDescrs)
    if (d == x.text) dtype = x.dtype;
  DISCO_CHECK(dtype != DType::Undefined, "'", path, "': unsupported .npy dtype '", d, "'");
  // numpy writes an array that is only Fortran-contiguous (a transposed
  // view, many a PyTorch output's .numpy()) in that order; it is reordered
  // to C order below.
  const bool fortran = field(header, "fortran_order", path).find("True") != std::string::npos;
  std::string shp = field(header, "shape", path);
  size_t open = shp.find('('), close = shp.find(')');
  DISCO_CHECK(open != std::string::npos && close != std::string::npos, "'", path, "': bad shape");
  std::vector<int64_t> shape;
  std::stringstream ss(shp.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t b = item.find_first_not_of(" "), e = item.find_last_not_of(" ");
    if (b == std::string::npos) continue;
    const std::string dim = item.substr(b, e - b + 1);
    const auto v = parse_count(dim);
    if (!v) {
      std::string shown;  // the message stays one printable line
      for (char ch : dim.substr(0, 40)) shown += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
      fail("'", path, "': .npy shape dim ", shape.size(), " is '", shown, dim.size() > 40 ? "...'" : "'",
           ", not a non-negative integer below 2^63");
    }
    shape.push_back(*v);
  }
  const std::string what = "'" + path + "'";
  const int64_t needed = checked_bytes(shape, dtype, what);
  // The data must be in the file before its buffer is allocated: a header
  // cannot make disco allocate more than the file holds.
  const std::streamoff data_start = f.tellg();
  f.seekg(0, std::ios::end);
  const int64_t have = static_cast<int64_t>(f.tellg() - data_start);
  f.seekg(data_start);
  DISCO_CHECK(have >= needed, what, " is truncated: its shape ", dims_text(shape), " needs ", bytes_text(needed),
              " of data, the file has ", have, " bytes");
  limit.check_bytes(what, shape, needed);
  TensorData t(dtype, shape);
  f.read(reinterpret_cast<char *>(t.mutable_data()), static_cast<std::streamsize>(t.num_bytes()));
  DISCO_CHECK(static_cast<size_t>(f.gcount()) == t.num_bytes(), "'", path, "' is truncated: expected ",
              t.num_bytes(), " bytes of data");
  return fortran ? c_order_from_fortran(t) : t;
}

void write_npy(const std::string &path, const TensorData &t) {
  const char *descr = nullptr;
  for (const auto &x : kDescrs)
    if (x.dtype == t.dtype) descr = x.text;
  DISCO_CHECK(descr, "cannot write dtype ", dtype_name(t.dtype), " to .npy");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 ? "," : (i + 1 < t.shape.size() ? ", " : ""));
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  DISCO_CHECK(f.good(), "cannot write '", path, "'");
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t hl = static_cast<uint16_t>(header.size());
  char hb[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  f.write(hb, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char *>(t.data()), static_cast<std::streamsize>(t.num_bytes()));
  DISCO_CHECK(f.good(), "error writing '", path, "'");
}

}  // namespace disco
