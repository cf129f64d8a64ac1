#include "runtime/memory_plan.h"

#include <algorithm>
#include <optional>

#include "frontend/checked_size.h"

namespace disco {

namespace {

bool temp(const Plan &plan, int b) {
  return b >= 0 && static_cast<size_t>(b) < plan.buffers.size() && plan.buffers[b].kind == PlanBuffer::Temp;
}

// The input index a step's kOutputReusesInput names, or -1.
int reused_input(const PlanStep &step) {
  const auto it = step.params.find(kOutputReusesInput);
  if (it == step.params.end()) return -1;
  const std::optional<int64_t> k = parse_count(it->second);
  return k && *k < static_cast<int64_t>(step.inputs.size()) ? static_cast<int>(*k) : -1;
}

}  // namespace

std::vector<int> shared_buffers(const Plan &plan) {
  const size_t n = plan.buffers.size();
  std::vector<int> rep(n), first(n, -1), last(n, -1);
  for (size_t b = 0; b < n; ++b) rep[b] = static_cast<int>(b);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    auto touch = [&](int b) {
      if (b < 0 || static_cast<size_t>(b) >= n) return;
      if (first[b] < 0) first[b] = static_cast<int>(s);
      last[b] = static_cast<int>(s);
    };
    for (int b : plan.steps[s].outputs) touch(b);
    for (int b : plan.steps[s].inputs) touch(b);
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep &step = plan.steps[s];
    const int k = reused_input(step);
    if (k < 0 || step.outputs.empty()) continue;
    const int r = step.inputs[k], y = step.outputs[0];
    if (!temp(plan, r) || !temp(plan, y) || r == y) continue;
    // The input dies here and is read once here; the output is born here.
    if (last[r] != static_cast<int>(s) || first[y] != static_cast<int>(s)) continue;
    if (std::count(step.inputs.begin(), step.inputs.end(), r) != 1) continue;
    if (std::count(step.inputs.begin(), step.inputs.end(), y) != 0) continue;
    if (std::count(step.outputs.begin(), step.outputs.end(), r) != 0) continue;
    const PlanBuffer &rb = plan.buffers[r], &yb = plan.buffers[y];
    if (rb.dtype != yb.dtype || rb.shape != yb.shape || rb.channel_multiple != yb.channel_multiple) continue;
    rep[y] = rep[r];
  }
  return rep;
}

std::vector<BufferLifetime> temp_lifetimes(const Plan &plan) {
  std::vector<BufferLifetime> out;
  std::vector<int> index(plan.buffers.size(), -1);
  const std::vector<int> rep = shared_buffers(plan);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    auto touch = [&](int b) {
      if (b < 0 || plan.buffers[b].kind != PlanBuffer::Temp) return;
      b = rep[b];
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
