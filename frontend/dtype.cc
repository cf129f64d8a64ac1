#include "frontend/dtype.h"

#include "frontend/errors.h"

namespace disco {

namespace {
struct Info {
  DType t;
  int onnx;
  size_t size;
  const char *name;
};
// ONNX TensorProto.DataType codes.
constexpr Info kInfo[] = {
    {DType::F32, 1, 4, "float32"},  {DType::U8, 2, 1, "uint8"},    {DType::I8, 3, 1, "int8"},
    {DType::U16, 4, 2, "uint16"},   {DType::I16, 5, 2, "int16"},   {DType::I32, 6, 4, "int32"},
    {DType::I64, 7, 8, "int64"},    {DType::Bool, 9, 1, "bool"},   {DType::F16, 10, 2, "float16"},
    {DType::F64, 11, 8, "float64"}, {DType::U32, 12, 4, "uint32"}, {DType::U64, 13, 8, "uint64"},
    {DType::BF16, 16, 2, "bfloat16"},
};
const Info &info(DType t) {
  for (const auto &i : kInfo)
    if (i.t == t) return i;
  fail("undefined dtype");
}
}  // namespace

size_t dtype_size(DType t) { return info(t).size; }
const char *dtype_name(DType t) { return t == DType::Undefined ? "undefined" : info(t).name; }
int dtype_to_onnx(DType t) { return info(t).onnx; }

DType dtype_from_onnx(int code) {
  for (const auto &i : kInfo)
    if (i.onnx == code) return i.t;
  if (code == 8) fail("string tensors are not supported");
  fail("unsupported ONNX element type ", code);
}

bool dtype_is_float(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
bool dtype_is_signed(DType t) {
  return dtype_is_float(t) || t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

}  // namespace disco
