#include "targets/onednn/onednn_weights.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "targets/onednn/onednn_step.h"

namespace disco {
namespace {

// Weights of 2 MiB and more live on transparent huge pages where the system
// allows them (madvise): a GEMM streams its weights from memory on every run,
// and with 4 KiB pages the TLB misses cost 8-15% at 32 rows (bert_layer's
// 2.4 and 9.4 MB matrices). They get a mapping of their own, advised before
// its first touch: heap memory that malloc hands back has often been touched
// already and stays on small pages (bert_layer had 8 of its 28 MB on huge
// pages). The mapping starts on a 2 MiB boundary and is a whole number of
// 2 MiB, so that all of it can be huge pages.
constexpr size_t kHugePage = size_t{2} << 20;

struct WeightsMapping {
  void *addr = nullptr;
  size_t size = 0;
  dnnl::memory mem;
  ~WeightsMapping() {
    if (addr) munmap(addr, size);
  }
};

// A 2 MiB-aligned anonymous mapping of `size` bytes (a multiple of 2 MiB), or null.
void *map_huge_aligned(size_t size) {
  void *raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + size + kHugePage;
  if (end > aligned + size) munmap(reinterpret_cast<void *>(aligned + size), end - (aligned + size));
  return reinterpret_cast<void *>(aligned);
}

std::shared_ptr<dnnl::memory> weights_memory(const dnnl::memory::desc &want) {
  const size_t size = want.get_size();
  if (size < kHugePage) return std::make_shared<dnnl::memory>(want, onednn_engine());
  auto m = std::make_shared<WeightsMapping>();
  m->size = (size + kHugePage - 1) / kHugePage * kHugePage;
  m->addr = map_huge_aligned(m->size);
  if (!m->addr) return std::make_shared<dnnl::memory>(want, onednn_engine());
  madvise(m->addr, m->size, MADV_HUGEPAGE);  // advice only: without THP the pages stay small
  m->mem = dnnl::memory(want, onednn_engine(), m->addr);
  return std::shared_ptr<dnnl::memory>(m, &m->mem);
}

// 128 bits of the weights' bytes, from two independent multiply-mix lanes:
// the store tells contents apart by it, so it must not collide in practice.
// About 5 GB/s, paid once per matrix and layout.
struct Digest {
  uint64_t a, b;
  bool operator==(const Digest &o) const { return a == o.a && b == o.b; }
};

Digest digest(const void *data, size_t n) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t a = 0x9E3779B97F4A7C15ull ^ n, b = 0xC2B2AE3D27D4EB4Full + n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    a = (a ^ w) * 0xFF51AFD7ED558CCDull;
    a ^= a >> 32;
    b = (b + w) * 0xC4CEB9FE1A85EC53ull;
    b ^= b >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  a = (a ^ tail) * 0xFF51AFD7ED558CCDull;
  b = (b + tail) * 0xC4CEB9FE1A85EC53ull;
  return {a ^ (a >> 31), b ^ (b >> 33)};
}

struct Entry {
  dnnl::memory::desc user, want;
  Digest content;
  std::weak_ptr<dnnl::memory> mem;
};

struct Store {
  std::mutex mutex;
  std::vector<Entry> entries;
};

Store &store() {
  static auto *s = new Store;  // never destroyed: kernels may outlive statics
  return *s;
}

}  // namespace

std::shared_ptr<dnnl::memory> shared_packed_weights(const dnnl::memory::desc &user, const void *data,
                                                    const dnnl::memory::desc &want, dnnl::stream &stream) {
  const Digest content = digest(data, user.get_size());
  Store &s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto &entries = s.entries;
  entries.erase(std::remove_if(entries.begin(), entries.end(), [](const Entry &e) { return e.mem.expired(); }),
                entries.end());
  for (const auto &e : entries)
    if (e.content == content && e.want == want && e.user == user)
      if (auto mem = e.mem.lock()) return mem;
  auto mem = weights_memory(want);
  dnnl::memory src(user, onednn_engine(), const_cast<void *>(data));
  dnnl::reorder(src, *mem).execute(stream, src, *mem);
  stream.wait();
  entries.push_back({user, want, content, mem});
  return mem;
}

}  // namespace disco
