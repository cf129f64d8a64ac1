#include "frontend/random_tensor.h"

#include "frontend/errors.h"

namespace disco {

TensorData random_tensor(DType t, const std::vector<int64_t> &shape, uint64_t seed) {
  TensorData d(t, shape);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  for (int64_t i = 0; i < d.num_elements(); ++i) {
    double u = static_cast<double>(next() >> 11) / 9007199254740992.0;  // [0, 1)
    switch (t) {
      case DType::F32: d.mutable_as<float>()[i] = static_cast<float>(2 * u - 1); break;
      case DType::F64: d.mutable_as<double>()[i] = 2 * u - 1; break;
      case DType::F16: d.mutable_as<uint16_t>()[i] = float_to_half(static_cast<float>(2 * u - 1)); break;
      case DType::Bool: d.mutable_as<uint8_t>()[i] = u < 0.5; break;
      case DType::I64: d.mutable_as<int64_t>()[i] = static_cast<int64_t>(u * 10); break;
      case DType::I32: d.mutable_as<int32_t>()[i] = static_cast<int32_t>(u * 10); break;
      case DType::I8: d.mutable_as<int8_t>()[i] = static_cast<int8_t>(u * 10); break;
      case DType::U8: d.mutable_as<uint8_t>()[i] = static_cast<uint8_t>(u * 10); break;
      default: fail("cannot fill dtype ", dtype_name(t), " with random data; give the input as a file");
    }
  }
  return d;
}

}  // namespace disco
