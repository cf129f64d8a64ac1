// Byte storage that starts on a cache line. Kernels load and store whole
// 64-byte vectors (AVX-512); a tensor that starts mid-line splits accesses
// across two lines, and with malloc's 16-byte alignment that happened or not
// from process to process (the same model ran 10-25% slower or faster
// depending on where its constants and outputs fell).
//
// The allocator can also lend a caller's memory to one vector (a numpy
// array's buffer that Python's Model.run reads in place): see
// CacheLineAllocator::borrowing and TensorData::borrow. Such memory is not
// necessarily cache-line aligned; no kernel needs it to be for correctness.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace disco {

constexpr size_t kCacheLine = 64;

// Memory that one vector may take as its storage instead of allocating:
// [data, data + bytes), kept valid by `owner`. Handed out at most once, so a
// vector that reallocates never gets it again (it may already be someone
// else's again in the caller's eyes, and a copy must not land in it).
struct BorrowedMemory {
  void *data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<void> owner;
  std::atomic<bool> handed_out{false};

  bool contains(const void *p) const {
    auto *b = static_cast<const uint8_t *>(data), *q = static_cast<const uint8_t *>(p);
    return q >= b && q < b + bytes;
  }
};

// Stateless (every allocator equal, memory from aligned operator new) unless
// made by borrowing(); then its first allocate() of at most the borrowed size
// returns the borrowed memory, deallocate() leaves that memory alone, and
// construct() leaves the borrowed bytes as they are (the caller's values)
// where a plain allocator zeroes. Copies of a container get a plain allocator
// (their own memory); moves and swaps take the allocator with the storage.
template <typename T>
class CacheLineAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  // An assigned-to container keeps its allocator (and memory) and copies the elements in.
  using propagate_on_container_copy_assignment = std::false_type;
  using is_always_equal = std::false_type;

  CacheLineAllocator() = default;
  // Copies, moves and rebinds share the borrowed state: a moved-from
  // allocator must still equal what it was (there is no move constructor).
  CacheLineAllocator(const CacheLineAllocator &) = default;
  CacheLineAllocator &operator=(const CacheLineAllocator &) = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U> &o) : borrowed_(o.borrowed()) {}

  // An allocator whose first allocation of at most `bytes` bytes is `data`;
  // `owner` is kept until the last copy of this allocator is gone.
  static CacheLineAllocator borrowing(void *data, size_t bytes, std::shared_ptr<void> owner) {
    CacheLineAllocator a;
    a.borrowed_ = std::make_shared<BorrowedMemory>();
    a.borrowed_->data = data;
    a.borrowed_->bytes = bytes;
    a.borrowed_->owner = std::move(owner);
    return a;
  }

  T *allocate(size_t n) {
    if (borrowed_ && n <= borrowed_->bytes / sizeof(T) && !borrowed_->handed_out.exchange(true))
      return static_cast<T *>(borrowed_->data);
    return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(kCacheLine)));
  }
  void deallocate(T *p, size_t) {
    if (borrowed_ && p == borrowed_->data) return;  // the caller's
    ::operator delete(p, std::align_val_t(kCacheLine));
  }

  // Value-initialised (zero) elements, except over borrowed memory: its bytes
  // are the caller's and are what the container holds.
  template <typename U, typename... Args>
  void construct(U *p, Args &&...args) {
    if constexpr (sizeof...(Args) == 0 && std::is_trivially_default_constructible_v<U>) {
      if (borrowed_ && borrowed_->contains(p)) return;
    }
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }

  // A copied container owns its bytes.
  CacheLineAllocator select_on_container_copy_construction() const { return CacheLineAllocator(); }

  const std::shared_ptr<BorrowedMemory> &borrowed() const { return borrowed_; }

  // Equal when either can free what the other allocated: both plain, or the same borrowing.
  template <typename U>
  bool operator==(const CacheLineAllocator<U> &o) const { return borrowed_ == o.borrowed(); }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U> &o) const { return !(*this == o); }

 private:
  std::shared_ptr<BorrowedMemory> borrowed_;  // null: a plain allocator
};

using AlignedBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

}  // namespace disco
