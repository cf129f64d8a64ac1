#include "python/borrowed_bytes.h"

#include <cstring>
#include <type_traits>

namespace disco::python {

namespace {

#if defined(__GLIBCXX__)
// libstdc++'s _Vector_impl_data: the whole state of a vector with a stateless allocator.
struct VectorPointers {
  uint8_t *start, *finish, *end_of_storage;
};
constexpr bool kCanBorrow = sizeof(AlignedBytes) == sizeof(VectorPointers) &&
                            std::is_empty_v<CacheLineAllocator<uint8_t>>;
#else
struct VectorPointers {};
constexpr bool kCanBorrow = false;
#endif

void set_pointers(AlignedBytes *v, const VectorPointers &p) { std::memcpy(static_cast<void *>(v), &p, sizeof p); }

}  // namespace

std::shared_ptr<AlignedBytes> borrow_bytes(uint8_t *data, size_t size, std::function<void()> release) {
  if constexpr (!kCanBorrow) {
    return nullptr;
  } else {
    if (!data || size == 0) return nullptr;  // an empty vector needs no borrowing
    auto *v = new AlignedBytes();
    set_pointers(v, {data, data + size, data + size});
    if (v->data() != data || v->size() != size || v->capacity() != size) {
      set_pointers(v, {nullptr, nullptr, nullptr});
      delete v;
      return nullptr;
    }
    return std::shared_ptr<AlignedBytes>(v, [release = std::move(release)](AlignedBytes *b) {
      set_pointers(b, {nullptr, nullptr, nullptr});  // empty again: its destructor frees nothing
      delete b;
      if (release) release();
    });
  }
}

}  // namespace disco::python
