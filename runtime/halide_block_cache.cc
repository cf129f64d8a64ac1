#include "runtime/halide_block_cache.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>

namespace disco {

namespace {

constexpr size_t kAlign = 128;                   // Halide's own alignment for heap allocations
constexpr size_t kHeader = kAlign;               // the block's size, before the pointer handed out
constexpr size_t kMinCached = size_t(64) << 10;  // below this, glibc's heap reuses memory itself
constexpr size_t kMaxCachedBytes = size_t(512) << 20;

struct Cache {
  std::mutex mu;
  std::multimap<size_t, void *> free_blocks;  // rounded size -> block (its header)
  size_t bytes = 0;
};

Cache &cache() {
  static Cache *c = new Cache;  // never destroyed: kernels may free after static destructors run
  return *c;
}

size_t rounded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

void *hand_out(void *block, size_t size) {
  *static_cast<size_t *>(block) = size;
  return static_cast<char *>(block) + kHeader;
}

}  // namespace

void *halide_block_malloc(void *, size_t bytes) {
  const size_t size = rounded(bytes);
  if (size >= kMinCached) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free_blocks.find(size);
    if (it != c.free_blocks.end()) {
      void *block = it->second;
      c.free_blocks.erase(it);
      c.bytes -= size;
      return hand_out(block, size);
    }
  }
  void *block = std::aligned_alloc(kAlign, size + kHeader);
  return block ? hand_out(block, size) : nullptr;
}

void halide_block_free(void *, void *ptr) {
  if (!ptr) return;
  void *block = static_cast<char *>(ptr) - kHeader;
  const size_t size = *static_cast<size_t *>(block);
  if (size >= kMinCached) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.bytes + size <= kMaxCachedBytes) {
      c.free_blocks.emplace(size, block);
      c.bytes += size;
      return;
    }
  }
  std::free(block);
}

size_t halide_block_cache_bytes() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.bytes;
}

void halide_block_cache_clear() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto &[size, block] : c.free_blocks) std::free(block);
  c.free_blocks.clear();
  c.bytes = 0;
}

}  // namespace disco
