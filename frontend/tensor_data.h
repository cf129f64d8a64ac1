// Constant tensor contents: initializers, Constant nodes, folded shape values
// and the data of .npy files; a run's inputs and outputs. Storage is shared,
// so copies are cheap. It is normally disco's own (cache-line aligned); see
// borrow() for a tensor over a caller's memory.
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

  // A tensor over the caller's memory: [data, data + the bytes `shape` needs
  // in `t`), not copied and not zeroed, valid while `owner` lives. The
  // storage keeps `owner` until the last TensorData sharing it is gone, so
  // `owner` is how the caller learns the memory is free again (a null owner:
  // the caller keeps the memory valid itself). Writing through mutable_data()
  // or *bytes writes the caller's memory, as long as the storage is not grown
  // beyond its size (growing moves it to memory of disco's own). A copy of
  // *bytes (a deep copy) owns its bytes. `data` needs the alignment of `t`
  // only, not kCacheLine. No tensor of zero bytes borrows: it gets empty
  // storage of its own and `owner` is let go at once.
  static TensorData borrow(DType t, std::vector<int64_t> shape, void *data, std::shared_ptr<void> owner);
  // Whether the bytes are a caller's (made by borrow() and not reallocated since).
  bool borrowed() const;
};

// IEEE half <-> float, used by constant folding and the .npy reader.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

}  // namespace disco
