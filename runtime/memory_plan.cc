#include "runtime/memory_plan.h"

#include <algorithm>

namespace disco {

std::vector<BufferLifetime> temp_lifetimes(const Plan &plan) {
  std::vector<BufferLifetime> out;
  std::vector<int> index(plan.buffers.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    auto touch = [&](int b) {
      if (b < 0 || plan.buffers[b].kind != PlanBuffer::Temp) return;
      if (index[b] < 0) {
        index[b] = static_cast<int>(out.size());
        out.push_back({b, static_cast<int>(s), static_cast<int>(s)});
      }
      out[index[b]].last = static_cast<int>(s);
    };
    for (int b : plan.steps[s].outputs) touch(b);
    for (int b : plan.steps[s].inputs) touch(b);
  }
  return out;
}

ArenaLayout place_buffers(const std::vector<BufferLifetime> &lifetimes, const std::vector<int64_t> &bytes,
                          size_t num_buffers) {
  constexpr int64_t kAlign = 64;
  ArenaLayout layout;
  layout.offset.assign(num_buffers, -1);
  std::vector<const BufferLifetime *> order;
  for (const auto &l : lifetimes) order.push_back(&l);
  // Largest first; ties by first use, then buffer id, so the layout is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](const BufferLifetime *a, const BufferLifetime *b) {
    if (bytes[a->buffer] != bytes[b->buffer]) return bytes[a->buffer] > bytes[b->buffer];
    return a->first < b->first;
  });
  struct Placed {
    int64_t begin, end;
    int first, last;
  };
  std::vector<Placed> placed;
  for (const BufferLifetime *l : order) {
    const int64_t size = (std::max<int64_t>(bytes[l->buffer], 1) + kAlign - 1) / kAlign * kAlign;
    // Candidate offsets: 0 and the end of every placed buffer alive at the same time.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const auto &p : placed)
      if (p.first <= l->last && l->first <= p.last) busy.push_back({p.begin, p.end});
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto &[b, e] : busy) {
      if (at + size <= b) break;
      at = std::max(at, e);
    }
    layout.offset[l->buffer] = at;
    layout.size = std::max(layout.size, at + size);
    placed.push_back({at, at + size, l->first, l->last});
  }
  return layout;
}

}  // namespace disco
