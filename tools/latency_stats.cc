#include "tools/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontend/errors.h"

namespace disco {

double percentile_of_sorted(const std::vector<double> &sorted, double p) {
  if (sorted.empty()) fail("percentile of no values");
  if (!(p >= 0 && p <= 100)) fail("percentile ", p, " is outside [0, 100]");
  const double h = static_cast<double>(sorted.size() - 1) * p / 100;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

LatencyStats latency_stats(std::vector<double> times) {
  if (times.empty()) fail("latency statistics of no runs");
  std::sort(times.begin(), times.end());
  LatencyStats s;
  s.runs = times.size();
  s.min = times.front();
  s.max = times.back();
  s.p50 = percentile_of_sorted(times, 50);
  s.p90 = percentile_of_sorted(times, 90);
  s.p99 = percentile_of_sorted(times, 99);
  s.mean = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
  return s;
}

}  // namespace disco
