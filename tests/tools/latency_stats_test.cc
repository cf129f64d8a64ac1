// disco bench's latency statistics: percentiles by linear interpolation
// between ranks, checked against values worked out by hand (and equal to
// numpy.percentile's default).
#include "tools/latency_stats.h"

#include <gtest/gtest.h>

#include "frontend/errors.h"

namespace disco {
namespace {

TEST(LatencyStats, PercentilesInterpolateBetweenRanks) {
  // Sorted: 15 20 35 40 50; h = 4 p / 100.
  const std::vector<double> sorted = {15, 20, 35, 40, 50};
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0), 15);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 50), 35);    // h = 2
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 90), 46);    // h = 3.6: 40 + 0.6 * 10
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 99), 49.6);  // h = 3.96: 40 + 0.96 * 10
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 25), 20);    // h = 1
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 100), 50);
}

TEST(LatencyStats, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(percentile_of_sorted({1, 2, 3, 4}, 50), 2.5);  // h = 1.5
}

TEST(LatencyStats, StatsSortTheirInput) {
  // 1..10 shuffled, plus an outlier of 100: sorted 1..10, 100; h = 10 p / 100.
  const LatencyStats s = latency_stats({7, 3, 100, 1, 9, 4, 2, 10, 8, 6, 5});
  EXPECT_EQ(s.runs, 11u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.p50, 6);                      // h = 5
  EXPECT_DOUBLE_EQ(s.p90, 10);                     // h = 9
  EXPECT_DOUBLE_EQ(s.p99, 10 + 0.9 * (100 - 10));  // h = 9.9
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 155.0 / 11);
}

TEST(LatencyStats, OneRunIsEveryPercentile) {
  const LatencyStats s = latency_stats({3.25});
  EXPECT_DOUBLE_EQ(s.min, 3.25);
  EXPECT_DOUBLE_EQ(s.p50, 3.25);
  EXPECT_DOUBLE_EQ(s.p99, 3.25);
  EXPECT_DOUBLE_EQ(s.max, 3.25);
}

TEST(LatencyStats, NoRunsOrAPercentileOutOfRangeIsAnError) {
  EXPECT_THROW(latency_stats({}), Error);
  EXPECT_THROW(percentile_of_sorted({1, 2}, 101), Error);
  EXPECT_THROW(percentile_of_sorted({1, 2}, -1), Error);
}

}  // namespace
}  // namespace disco
