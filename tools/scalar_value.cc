#include "tools/scalar_value.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "tools/cli_args.h"

namespace disco {

namespace {

[[noreturn]] void bad(const std::string &option, const std::string &text, DType dtype, const std::string &why) {
  throw UsageError(option + ": '" + text + "' is not " + why + " (the input is " + dtype_name(dtype) + ")");
}

// The range of each integer dtype, as int64 (uint64 values above 2^63-1 are refused).
std::pair<int64_t, int64_t> int_range(DType t) {
  switch (t) {
    case DType::I8: return {INT8_MIN, INT8_MAX};
    case DType::I16: return {INT16_MIN, INT16_MAX};
    case DType::I32: return {INT32_MIN, INT32_MAX};
    case DType::U8: return {0, UINT8_MAX};
    case DType::U16: return {0, UINT16_MAX};
    case DType::U32: return {0, UINT32_MAX};
    case DType::U64: return {0, INT64_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}

}  // namespace

TensorData parse_scalar_value(const std::string &text, DType dtype, const std::string &option) {
  if (dtype == DType::Bool) {
    if (text == "true" || text == "1") return TensorData::from_ints(DType::Bool, {1}, {});
    if (text == "false" || text == "0") return TensorData::from_ints(DType::Bool, {0}, {});
    bad(option, text, dtype, "a bool (true, false, 1 or 0)");
  }
  if (dtype_is_float(dtype)) {
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE) bad(option, text, dtype, "a number");
    TensorData t(dtype, {});
    switch (dtype) {
      case DType::F32: *t.mutable_as<float>() = static_cast<float>(v); break;
      case DType::F64: *t.mutable_as<double>() = v; break;
      case DType::F16: *t.mutable_as<uint16_t>() = float_to_half(static_cast<float>(v)); break;
      default: throw UsageError(option + ": " + dtype_name(dtype) + " values cannot be given as text; use --input");
    }
    return t;
  }
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') bad(option, text, dtype, "an integer");
  const auto [lo, hi] = int_range(dtype);
  if (errno == ERANGE || v < lo || v > hi) bad(option, text, dtype, "in the dtype's range");
  return TensorData::from_ints(dtype, {v}, {});
}

}  // namespace disco
