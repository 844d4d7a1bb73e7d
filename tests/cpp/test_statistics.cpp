// The tools' round-trip statistics on hand-made timing lists; each expected value is
// worked out in the comment beside it from the rule the tool's source applies.
#include "statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace hopsim;

TEST(Statistics, WholeMicrosecondsAreDifferencesOfClockReadings)
{
  // Readings floor(10.7)=10 and floor(12.2)=12: 2 us, though 1.5 us elapsed.
  EXPECT_EQ(whole_us_between(10.7e-6, 12.2e-6), 2);
  // Readings 10 and 11: 1 us for 1.2 us elapsed.
  EXPECT_EQ(whole_us_between(10.0e-6, 11.2e-6), 1);
  // 84 us meant exactly but computed a hair low still reads 84.
  EXPECT_EQ(whole_us_between(0.0, 84e-6 - 1e-18), 84);
}

TEST(Statistics, LatencyCheckerModeIsSmallestMostFrequentUnder1000)
{
  // Counts: 5 -> 2, 7 -> 2, 9 -> 1, 1500 dropped (>= 1000). Tie 5/7: the scan keeps the
  // first bin that is strictly more frequent, so 5. Average of kept: (5+7+7+5+9)/5 = 6.6.
  LatencyCheckerRank r = latency_checker_rank({7, 5, 1500, 7, 5, 9});
  EXPECT_EQ(r.mode, 5);
  EXPECT_DOUBLE_EQ(r.average, 6.6);
}

TEST(Statistics, LatencyCheckerDropsRoundTripsOf1000AndMore)
{
  // 999 is kept (< 1000), 1000 is not: mode 999, average 999.
  LatencyCheckerRank r = latency_checker_rank({1000, 999, 1000, 4000});
  EXPECT_EQ(r.mode, 999);
  EXPECT_DOUBLE_EQ(r.average, 999.0);
}

TEST(Statistics, LatencyCheckerRankThatKeptNothingReportsZeros)
{
  // Every bin empty: mode stays at bin 0, every bin is skipped, average 0.
  LatencyCheckerRank r = latency_checker_rank({1200, 5000});
  EXPECT_EQ(r.mode, 0);
  EXPECT_DOUBLE_EQ(r.average, 0.0);
}

TEST(Statistics, LatencyCheckerAverageOfAveragesCountsZeros)
{
  // (200 + 0 + 100) / 3 ranks = 100: the rank that kept nothing weighs in.
  EXPECT_DOUBLE_EQ(latency_checker_average_of_averages({200.0, 0.0, 100.0}), 100.0);
}

TEST(Statistics, RayModeIsFirstToReachTheTopCount)
{
  // In order: 9 (9:1, best 9), 5 (5:1, not > 1), 5 (5:2 > 1, best 5), 9 (9:2, not > 2),
  // 9 (9:3 > 2, best 9), 5 (5:3, not > 3): 9, although 5 is smaller and as frequent.
  EXPECT_EQ(ray_mode_latency({9, 5, 5, 9, 9, 5}), 9);
  // No cut-off: 5000 twice beats 10 once.
  EXPECT_EQ(ray_mode_latency({10, 5000, 5000}), 5000);
  EXPECT_EQ(ray_mode_latency({}), kRayNotAvailable);
}

TEST(Statistics, RayAverageIsAnIntegerDivisionUpTo4096)
{
  // Kept: 10, 11, 4096 (4097 dropped): 4117 / 3 = 1372.33 -> 1372.
  EXPECT_EQ(ray_average_latency({10, 11, 4097, 4096}), 1372);
  // (3 + 4) / 2 = 3.5 -> 3.
  EXPECT_EQ(ray_average_latency({3, 4}), 3);
  // None kept: 0.
  EXPECT_EQ(ray_average_latency({5000, 9000}), 0);
}

TEST(Statistics, RayAllRanksAverageAndTruncatedDeviation)
{
  // Kept: 10, 13, 0 (a rank with no kept round trip reports 0 and is counted), 14; not
  // 5000 (> 4096) nor the not-available marker. Average 37 / 4 = 9.25. Deviations
  // truncated toward zero: 0.75 -> 0, 3.75 -> 3, -9.25 -> -9, 4.75 -> 4; squares
  // 0 + 9 + 81 + 16 = 106; SD = sqrt(106 / 4) = sqrt(26.5).
  RayAllRanks a = ray_average_for_all_ranks({10, 13, 5000, 0, kRayNotAvailable, 14});
  EXPECT_DOUBLE_EQ(a.average, 9.25);
  EXPECT_DOUBLE_EQ(a.standard_deviation, std::sqrt(26.5));
  RayAllRanks none = ray_average_for_all_ranks({5000});
  EXPECT_DOUBLE_EQ(none.average, 0.0);
  EXPECT_DOUBLE_EQ(none.standard_deviation, 0.0);
}
