// A small least-recently-used map from run-time shapes to what a oneDNN step
// made for them (a primitive, its memories, reordered weights). Dynamic shapes
// would otherwise grow it without end: it holds at most `capacity` entries and
// drops the one used longest ago. Linear search: capacities are a few dozen.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <utility>
#include <vector>

namespace disco {

template <typename Entry>
class ShapeLruCache {
 public:
  using Key = std::vector<int64_t>;
  explicit ShapeLruCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The entry for `key`, now the most recently used; null when absent.
  Entry *find(const Key &key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return &entries_.front().second;
      }
    return nullptr;
  }
  // Adds an entry (the key must be absent), evicting the least recently used when full.
  Entry &insert(Key key, Entry entry) {
    while (entries_.size() >= capacity_) entries_.pop_back();
    entries_.emplace_front(std::move(key), std::move(entry));
    return entries_.front().second;
  }
  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  void clear() { entries_.clear(); }

 private:
  size_t capacity_;
  std::list<std::pair<Key, Entry>> entries_;  // most recently used first
};

}  // namespace disco
