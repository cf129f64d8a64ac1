// Size bound of the on-disk compile cache. Entries are folders (plan, kernel
// library, constants; and the kernels-<compiler> store of kernel objects that
// models share, targets/kernel_store.h, which is evicted as one entry when it
// is the least recently used); a hit refreshes its folder's time, and after a fresh
// compile the least recently used entries go until the cache fits its bound:
// $DISCO_CACHE_MAX_MB, 4096 by default.
#pragma once
#include <cstdint>
#include <string>

namespace disco {

// Marks a cache entry as just used.
void touch_cache_entry(const std::string &dir);

// Removes least recently used entries of `root` (never `keep`) until the
// entries take at most `max_bytes`. Returns how many it removed.
int evict_cache_entries(const std::string &root, uint64_t max_bytes, const std::string &keep);

// The bound from $DISCO_CACHE_MAX_MB, else 4 GiB.
uint64_t cache_limit_bytes();

}  // namespace disco
