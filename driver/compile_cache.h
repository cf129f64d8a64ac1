// Size bound of the on-disk compile cache. Entries are folders (plan, kernel
// library, constants; and the kernels-<compiler> store of kernel objects that
// models share, targets/kernel_store.h, which is evicted as one entry when it
// is the least recently used); a hit refreshes its folder's time, and after a fresh
// compile the least recently used entries go until the cache fits its bound:
// $DISCO_CACHE_MAX_MB, 4096 by default.
//
// Other processes may be reading an entry while it goes. So an entry is first
// renamed to a tmp-evicted-* folder (one step: a reader sees all of it or
// none) and then removed, and an entry that some process has in use
// (driver/cache_entry_in_use.h) is not evicted at all: it stays, over the
// bound, until that process is done with it.
#pragma once
#include <cstdint>
#include <string>

namespace disco {

class CacheEntryInUse;

// Marks a cache entry as just used.
void touch_cache_entry(const std::string &dir);

// Removes least recently used entries of `root` (never `keep`, nor one in
// use) until the entries take at most `max_bytes`. Returns how many it removed.
int evict_cache_entries(const std::string &root, uint64_t max_bytes, const std::string &keep);

// Moves the entry at `dir`, found damaged through `verified`, out of the way
// (atomically, so that no other process loads it meanwhile) and removes it.
// When another process moved it away first and a fresh entry took its place,
// the fresh entry is put back, not removed.
void discard_cache_entry(const std::string &root, const std::string &dir, const CacheEntryInUse &verified);

// The bound from $DISCO_CACHE_MAX_MB, else 4 GiB.
uint64_t cache_limit_bytes();

}  // namespace disco
