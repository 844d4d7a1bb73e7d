#include "statistics.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace hopsim {

namespace {
// latency_checker's FREQUENCIES: the histogram covers 0..999 us.
constexpr int64_t kLatencyCheckerBins = 1000;
// Dates computed in floating point land a hair below a whole microsecond that the
// arithmetic meant exactly (84 us computed as 83.9999999): read the clock with this slack.
constexpr double kClockSlackUs = 1e-6;

int64_t clock_us(double s) { return static_cast<int64_t>(std::floor(s * 1e6 + kClockSlackUs)); }
}  // namespace

int64_t whole_us_between(double start_s, double end_s) { return clock_us(end_s) - clock_us(start_s); }

LatencyCheckerRank latency_checker_rank(const std::vector<int64_t>& round_trips_us)
{
  // The tool's 1000-bin histogram, read off the sorted kept values (the same answer
  // without scanning 1000 bins per rank, which 2^20 ranks would feel).
  std::vector<int64_t> kept;
  kept.reserve(round_trips_us.size());
  for (int64_t v : round_trips_us)
    if (v >= 0 && v < kLatencyCheckerBins)
      kept.push_back(v);
  LatencyCheckerRank out;
  if (kept.empty())
    return out;  // every bin empty: mode 0, and every bin is skipped: average 0
  std::sort(kept.begin(), kept.end());
  // Strictly more frequent: the smallest of equally frequent values wins. The tool also
  // skips bins with frequency >= 10 x the mode's; with a kept value none qualifies.
  int64_t best_count = 0;
  double sum = 0;
  for (size_t i = 0; i < kept.size();) {
    size_t j = i;
    while (j < kept.size() && kept[j] == kept[i])
      j++;
    if (static_cast<int64_t>(j - i) > best_count) {
      best_count = static_cast<int64_t>(j - i);
      out.mode = kept[i];
    }
    sum += static_cast<double>(kept[i]) * static_cast<double>(j - i);
    i = j;
  }
  out.average = sum / static_cast<double>(kept.size());
  return out;
}

double latency_checker_average_of_averages(const std::vector<double>& rank_averages)
{
  double sum = 0;
  for (double a : rank_averages)
    sum += a;
  return rank_averages.empty() ? 0.0 : sum / static_cast<double>(rank_averages.size());
}

int64_t ray_mode_latency(const std::vector<int64_t>& round_trips_us)
{
  std::map<int64_t, int64_t> counts;
  int64_t best = kRayNotAvailable;
  bool have = false;
  for (int64_t v : round_trips_us) {
    int64_t c = ++counts[v];
    if (not have || c > counts[best]) {
      best = v;
      have = true;
    }
  }
  return best;
}

int64_t ray_average_latency(const std::vector<int64_t>& round_trips_us)
{
  int64_t sum = 0;
  int64_t count = 0;
  for (int64_t v : round_trips_us)
    if (v <= kRayMaximumLatencyUs) {
      sum += v;
      count++;
    }
  return count > 0 ? sum / count : 0;
}

RayAllRanks ray_average_for_all_ranks(const std::vector<int64_t>& rank_averages_us)
{
  std::vector<int64_t> kept;
  for (int64_t v : rank_averages_us)
    if (v != kRayNotAvailable && v <= kRayMaximumLatencyUs)
      kept.push_back(v);
  RayAllRanks out;
  int64_t sum = 0;
  for (int64_t v : kept)
    sum += v;
  out.average = static_cast<double>(sum);
  if (not kept.empty())
    out.average /= static_cast<double>(kept.size());
  uint64_t squares = 0;
  for (int64_t v : kept) {
    auto diff = static_cast<int64_t>(static_cast<double>(v) - out.average);  // truncates toward 0
    squares += static_cast<uint64_t>(diff * diff);
  }
  out.standard_deviation = std::sqrt(static_cast<double>(squares) / static_cast<double>(kept.empty() ? 1 : kept.size()));
  return out;
}

std::pair<double, double> mean_sd(const std::vector<double>& values)
{
  if (values.empty())
    return {NAN, NAN};
  double sum = 0;
  for (double v : values)
    sum += v;
  double mean = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double v : values)
    sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sq / static_cast<double>(values.size()))};
}

double percentile(const std::vector<double>& sorted, double p)
{
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::max<size_t>(rank, 1) - 1];
}

}  // namespace hopsim
