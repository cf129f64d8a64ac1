// Latency statistics for `disco bench`: the percentiles of a set of run times.
//
// Percentiles use linear interpolation between the two nearest ranks, as
// numpy.percentile does by default: for n sorted values x[0..n-1] and p in
// [0, 100], h = (n - 1) * p / 100 and the percentile is
// x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
// So p0 is the minimum, p100 the maximum, and p50 the usual median (the mean
// of the middle two for an even count).
#pragma once
#include <cstddef>
#include <vector>

namespace disco {

// `sorted` ascending and not empty; `p` in [0, 100]. Throws disco::Error otherwise.
double percentile_of_sorted(const std::vector<double> &sorted, double p);

struct LatencyStats {
  size_t runs = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// The statistics of `times` (any order, any unit; the result is in the same
// unit). Throws disco::Error when `times` is empty.
LatencyStats latency_stats(std::vector<double> times);

}  // namespace disco
