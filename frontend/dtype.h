// Element types of tensors, with their ONNX codes, names and sizes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace disco {

enum class DType : uint8_t {
  Undefined, F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool,
};

size_t dtype_size(DType t);
const char *dtype_name(DType t);     // "float32", "int64", ...
DType dtype_from_onnx(int onnx_code);  // throws for string, complex and unknown codes
int dtype_to_onnx(DType t);
bool dtype_is_float(DType t);
bool dtype_is_signed(DType t);

}  // namespace disco
