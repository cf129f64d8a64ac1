// Byte storage that starts on a cache line. Kernels load and store whole
// 64-byte vectors (AVX-512); a tensor that starts mid-line splits accesses
// across two lines, and with malloc's 16-byte alignment that happened or not
// from process to process (the same model ran 10-25% slower or faster
// depending on where its constants and outputs fell).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace disco {

constexpr size_t kCacheLine = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) { return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(kCacheLine))); }
  void deallocate(T *p, size_t) { ::operator delete(p, std::align_val_t(kCacheLine)); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U> &) const { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U> &) const { return false; }
};

using AlignedBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

}  // namespace disco
