// Lends a caller's memory (a numpy array's buffer) to disco as TensorData
// storage, so that Model.run reads its inputs where they are instead of
// copying them.
//
// Why this is a workaround: TensorData keeps its bytes in an AlignedBytes, a
// std::vector (frontend/tensor_data.h), and a vector cannot adopt memory it
// did not allocate. On libstdc++ a vector is exactly its three pointers
// (begin, end, end of capacity); borrow_bytes() sets them to the caller's
// buffer and clears them again before the vector is destroyed, so the vector
// never frees or grows memory it does not own. It checks the result
// (data() and size() must come out right) and returns null when they do not,
// or on another standard library; the caller then copies. The proper fix is a
// TensorData that can hold external storage.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "frontend/aligned_bytes.h"

namespace disco::python {

// Storage over [data, data + size), or null when borrowing is not possible
// here. `release` runs once, when the last TensorData sharing the storage is
// gone (it lets go of the buffer's owner).
std::shared_ptr<AlignedBytes> borrow_bytes(uint8_t *data, size_t size, std::function<void()> release);

}  // namespace disco::python
