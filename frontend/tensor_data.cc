#include "frontend/tensor_data.h"

#include <cstring>
#include <optional>

#include "frontend/checked_size.h"
#include "frontend/errors.h"

namespace disco {

TensorData::TensorData(DType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
  // Checked: a wrapped product would allocate a buffer smaller than the shape says.
  bytes->assign(static_cast<size_t>(checked_bytes(shape, t, "a tensor")), 0);
}

TensorData TensorData::borrow(DType t, std::vector<int64_t> shape, void *data, std::shared_ptr<void> owner) {
  TensorData d;
  d.dtype = t;
  d.shape = std::move(shape);
  const auto n = static_cast<size_t>(checked_bytes(d.shape, t, "a borrowed tensor"));
  if (n == 0) return d;
  DISCO_CHECK(data, "a borrowed tensor of ", n, " bytes has no data");
  // The vector's one allocation is `data`, and its elements are left as they are (CacheLineAllocator).
  d.bytes = std::make_shared<AlignedBytes>(n, CacheLineAllocator<uint8_t>::borrowing(data, n, std::move(owner)));
  DISCO_CHECK(d.bytes->data() == data, "a borrowed tensor's storage is not the given memory");
  return d;
}

bool TensorData::borrowed() const {
  const CacheLineAllocator<uint8_t> a = bytes->get_allocator();  // a copy: get_allocator returns by value
  const auto &b = a.borrowed();
  return b && bytes->data() == b->data;
}

int64_t TensorData::num_elements() const {
  // `shape` is a public field: a caller may have set one its bytes do not hold.
  if (const std::optional<int64_t> n = element_count(shape)) return *n;
  return checked_elements(shape, std::string("a ") + dtype_name(dtype) + " tensor");  // fails, saying why
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // round to nearest even
  return static_cast<uint16_t>(half);
}

namespace {
template <typename R>
R element(const TensorData &t, int64_t i) {
  DISCO_CHECK(i >= 0 && i < t.num_elements(), "constant index ", i, " out of range");
  switch (t.dtype) {
    case DType::F32: return static_cast<R>(t.as<float>()[i]);
    case DType::F64: return static_cast<R>(t.as<double>()[i]);
    case DType::F16: return static_cast<R>(half_to_float(t.as<uint16_t>()[i]));
    case DType::BF16: {
      uint32_t b = static_cast<uint32_t>(t.as<uint16_t>()[i]) << 16;
      float f;
      std::memcpy(&f, &b, 4);
      return static_cast<R>(f);
    }
    case DType::I8: return static_cast<R>(t.as<int8_t>()[i]);
    case DType::I16: return static_cast<R>(t.as<int16_t>()[i]);
    case DType::I32: return static_cast<R>(t.as<int32_t>()[i]);
    case DType::I64: return static_cast<R>(t.as<int64_t>()[i]);
    case DType::U8: return static_cast<R>(t.as<uint8_t>()[i]);
    case DType::U16: return static_cast<R>(t.as<uint16_t>()[i]);
    case DType::U32: return static_cast<R>(t.as<uint32_t>()[i]);
    case DType::U64: return static_cast<R>(t.as<uint64_t>()[i]);
    case DType::Bool: return static_cast<R>(t.as<uint8_t>()[i] != 0);
    default: fail("constant of undefined dtype");
  }
}
}  // namespace

int64_t TensorData::int_at(int64_t i) const { return element<int64_t>(*this, i); }
double TensorData::float_at(int64_t i) const { return element<double>(*this, i); }

std::vector<int64_t> TensorData::to_int64() const {
  std::vector<int64_t> v(static_cast<size_t>(num_elements()));
  for (int64_t i = 0; i < num_elements(); ++i) v[i] = int_at(i);
  return v;
}

TensorData TensorData::from_int64(const std::vector<int64_t> &v, std::vector<int64_t> shape) {
  TensorData t(DType::I64, std::move(shape));
  DISCO_CHECK(t.num_elements() == static_cast<int64_t>(v.size()), "from_int64: size mismatch");
  if (!v.empty()) std::memcpy(t.mutable_data(), v.data(), v.size() * 8);  // an empty tensor has no storage
  return t;
}

TensorData TensorData::from_ints(DType t, const std::vector<int64_t> &v, std::vector<int64_t> shape) {
  TensorData out(t, std::move(shape));
  DISCO_CHECK(out.num_elements() == static_cast<int64_t>(v.size()), "from_ints: size mismatch");
  for (size_t k = 0; k < v.size(); ++k) {
    switch (t) {
      case DType::I8: out.mutable_as<int8_t>()[k] = static_cast<int8_t>(v[k]); break;
      case DType::I16: out.mutable_as<int16_t>()[k] = static_cast<int16_t>(v[k]); break;
      case DType::I32: out.mutable_as<int32_t>()[k] = static_cast<int32_t>(v[k]); break;
      case DType::I64: out.mutable_as<int64_t>()[k] = v[k]; break;
      case DType::U8: out.mutable_as<uint8_t>()[k] = static_cast<uint8_t>(v[k]); break;
      case DType::U16: out.mutable_as<uint16_t>()[k] = static_cast<uint16_t>(v[k]); break;
      case DType::U32: out.mutable_as<uint32_t>()[k] = static_cast<uint32_t>(v[k]); break;
      case DType::U64: out.mutable_as<uint64_t>()[k] = static_cast<uint64_t>(v[k]); break;
      case DType::Bool: out.mutable_as<uint8_t>()[k] = v[k] != 0; break;
      default: fail("integer values cannot make a ", dtype_name(t), " tensor");
    }
  }
  return out;
}

TensorData TensorData::scalar_f32(float v) {
  TensorData t(DType::F32, {});
  t.mutable_as<float>()[0] = v;
  return t;
}

}  // namespace disco
