// Memory planning: the temporary buffers of a plan share one arena, placed by
// lifetime, so that a buffer whose last reader has run lends its bytes to the
// next one. The working set stays small (often within the caches) and the
// arena's pages are touched once, then reused run after run.
//
// Lifetimes come from the plan (the steps that write and read each buffer);
// sizes come from the symbols of a run, so the layout is computed per shape.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/plan.h"

namespace disco {

struct BufferLifetime {
  int buffer = -1;
  int first = 0, last = 0;  // step indices, inclusive
};

// Lifetimes of the plan's Temp buffers.
std::vector<BufferLifetime> temp_lifetimes(const Plan &plan);

struct ArenaLayout {
  std::vector<int64_t> offset;  // per buffer id; -1 for buffers outside the arena
  int64_t size = 0;             // bytes
};

// Greedy by size (largest first), each buffer at the lowest 64-byte aligned
// offset that overlaps no placed buffer alive at the same time.
// `bytes[b]` is buffer b's size in bytes.
ArenaLayout place_buffers(const std::vector<BufferLifetime> &lifetimes, const std::vector<int64_t> &bytes,
                          size_t num_buffers);

}  // namespace disco
