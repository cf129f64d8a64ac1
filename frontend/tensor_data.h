// Constant tensor contents: initializers, Constant nodes, folded shape values
// and the data of .npy files. Storage is shared, so copies are cheap.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/aligned_bytes.h"
#include "frontend/dtype.h"

namespace disco {

struct TensorData {
  DType dtype = DType::Undefined;
  std::vector<int64_t> shape;  // ONNX order, outermost first
  std::shared_ptr<AlignedBytes> bytes = std::make_shared<AlignedBytes>();

  TensorData() = default;
  TensorData(DType t, std::vector<int64_t> s);  // zero-filled

  int64_t num_elements() const;
  size_t num_bytes() const { return bytes->size(); }
  const uint8_t *data() const { return bytes->data(); }
  uint8_t *mutable_data() { return bytes->data(); }
  template <typename T>
  const T *as() const { return reinterpret_cast<const T *>(bytes->data()); }
  template <typename T>
  T *mutable_as() { return reinterpret_cast<T *>(bytes->data()); }

  // Element i converted to int64 or double; works for every dtype.
  int64_t int_at(int64_t i) const;
  double float_at(int64_t i) const;
  std::vector<int64_t> to_int64() const;

  static TensorData from_int64(const std::vector<int64_t> &v, std::vector<int64_t> shape);
  // Integer values converted to any integer or bool dtype.
  static TensorData from_ints(DType t, const std::vector<int64_t> &v, std::vector<int64_t> shape);
  static TensorData scalar_f32(float v);
};

// IEEE half <-> float, used by constant folding and the .npy reader.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

}  // namespace disco
