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

// A step's param naming the input (an index into its inputs) whose bytes its
// output may take over: the step reads each element of that input before it
// writes the same element of its output, or reads it apart from the output
// (a residual that a convolution's or a product's result starts from). The
// planner shares the two only where the input is a temporary that no later
// step reads and both have one shape, type and channel padding; otherwise the
// step runs as it would without the param.
inline constexpr const char kOutputReusesInput[] = "output_reuses_input";

// Per buffer: the buffer whose bytes it takes (itself where it takes none's),
// as kOutputReusesInput allows; a chain of such steps shares one buffer's bytes.
std::vector<int> shared_buffers(const Plan &plan);

struct BufferLifetime {
  int buffer = -1;
  int first = 0, last = 0;  // step indices, inclusive
};

// Lifetimes of the plan's Temp buffers; buffers that share bytes
// (shared_buffers) as one, under the first of them.
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
