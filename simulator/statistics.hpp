// The round-trip statistics of the real tools, as their source computes them
// (docs/workloads.md): latency_checker (process.c, get_result / get_result_reply) and
// Ray's network test (NetworkTest.cpp getModeLatency / getAverageLatency, and the
// master's AverageForAllRanks with RayPlatform's getAverage / getStandardDeviation).
// Inputs are whole microseconds in the order the round trips were made.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace hopsim {

// A round trip as both tools time it: the difference of two gettimeofday readings in
// whole microseconds, not the truncated true duration. The simulated clock starts at 0.
int64_t whole_us_between(double start_s, double end_s);

// latency_checker, one rank: a histogram of the round trips under 1000 us (larger ones
// are dropped); the mode is the smallest most frequent value (0 if none was kept) and
// the average is the mean of the kept values (0 if none was kept).
struct LatencyCheckerRank {
  int64_t mode = 0;
  double average = 0;
};
LatencyCheckerRank latency_checker_rank(const std::vector<int64_t>& round_trips_us);
// Rank 0's "average of average roundtrip latencies": the sum of every rank's average,
// zeros included, over the number of ranks.
double latency_checker_average_of_averages(const std::vector<double>& rank_averages);

// Ray, one rank: the mode over all round trips (no cut-off); on ties the value that
// first reached the top count, in the order the round trips were made. Ray's
// LATENCY_INFORMATION_NOT_AVAILABLE (123123123) if there were none.
constexpr int64_t kRayNotAvailable = 123123123;
constexpr int64_t kRayMaximumLatencyUs = 4096;
int64_t ray_mode_latency(const std::vector<int64_t>& round_trips_us);
// Ray, one rank: the integer mean (truncating division) of the round trips up to
// 4096 us; 0 if none was kept.
int64_t ray_average_latency(const std::vector<int64_t>& round_trips_us);
// Ray's master: over the ranks' integer averages that are available and at most
// 4096 us, the mean (integer sum over the count, 0 if none) and the population
// standard deviation with each deviation truncated to an integer before squaring.
struct RayAllRanks {
  double average = 0;
  double standard_deviation = 0;
};
RayAllRanks ray_average_for_all_ranks(const std::vector<int64_t>& rank_averages_us);

// The plain statistics beside the tools' own (rtt_us, per_rank_mean_us, relays).
// Mean and population standard deviation, summed in the given order; NaN for no values.
std::pair<double, double> mean_sd(const std::vector<double>& values);
// Nearest-rank percentile of sorted values (the smallest value with at least p% of the
// values at or below it); p in (0, 100], values not empty.
double percentile(const std::vector<double>& sorted, double p);

}  // namespace hopsim
