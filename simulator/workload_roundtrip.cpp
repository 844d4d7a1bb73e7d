#include "workloads.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace hopsim {

namespace {

enum Kind { kRequest = 0, kReply = 1 };

// The cut-offs of the real tools: latency_checker keeps round trips under 1000 us,
// Ray's network test drops those above 4096 us from its means.
constexpr double kLatencyCheckerCutoffUs = 1000.0;
constexpr double kRayCutoffUs = 4096.0;

struct Kept {
  double mean = NAN;
  double mode = NAN;  // most frequent whole microsecond (smallest on ties)
  int64_t count = 0;
};

Kept keep(const double* rtts, int64_t n, bool (*kept)(double))
{
  Kept k;
  double sum = 0;
  std::map<int64_t, int64_t> histogram;
  for (int64_t i = 0; i < n; i++) {
    if (not kept(rtts[i]))
      continue;
    sum += rtts[i];
    k.count++;
    // Whole microseconds, truncated as the tools do; the tolerance keeps an exact 84 us
    // that floating point computed as 83.9999999 in the 84 bin.
    histogram[static_cast<int64_t>(std::floor(rtts[i] + 1e-6))]++;
  }
  if (k.count > 0) {
    k.mean = sum / static_cast<double>(k.count);
    int64_t best = 0;
    for (const auto& [us, c] : histogram)
      if (c > best) {
        best = c;
        k.mode = static_cast<double>(us);
      }
  }
  return k;
}

bool under_lc(double us) { return us < kLatencyCheckerCutoffUs; }
bool under_ray(double us) { return us <= kRayCutoffUs; }
bool any(double) { return true; }

// Mean and population SD of the finite values.
std::pair<double, double> mean_sd(const std::vector<double>& values)
{
  double sum = 0;
  int64_t n = 0;
  for (double v : values)
    if (std::isfinite(v)) {
      sum += v;
      n++;
    }
  if (n == 0)
    return {NAN, NAN};
  double mean = sum / static_cast<double>(n);
  double sq = 0;
  for (double v : values)
    if (std::isfinite(v))
      sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sq / static_cast<double>(n))};
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p)
{
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::max<size_t>(rank, 1) - 1];
}

}  // namespace

RoundTrip::RoundTrip(const WorkloadSpec& spec, bool routed)
    : spec_(spec), routed_(routed), work_(spec.ranks), rtt_us_(static_cast<size_t>(spec.ranks) * spec.exchanges)
{
  for (int r = 0; r < spec.ranks; r++) {
    // latency_checker's srand(time(NULL)) gives every rank the same sequence.
    uint64_t seed = spec.destinations == Destinations::Shared ? stream_seed(spec.seed, 0)
                                                              : stream_seed(spec.seed, static_cast<uint64_t>(r) + 1);
    work_[r].destinations = Rng(seed);
  }
}

bool RoundTrip::wants_pass(int rank)
{
  const RankWork& w = work_[rank];
  return not w.waiting && w.done < spec_.exchanges;
}

void RoundTrip::pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out)
{
  RankWork& w = work_[rank];
  bool reply_now = false;
  if (received != nullptr) {
    if (received->kind == kRequest) {
      out.push_back(sim.create(rank, received->origin, spec_.reply_bytes, kReply, received->seq));
    } else {
      rtt_us_[static_cast<size_t>(rank) * spec_.exchanges + w.done] = (t - w.sent_at) * 1e6;
      w.done++;
      w.waiting = false;
      reply_now = true;
      if (w.done == spec_.exchanges && ++finished_ranks_ == spec_.ranks)
        sim.finish();
    }
  }
  // The next request leaves on the pass after the reply arrived.
  if (not reply_now && not w.waiting && w.done < spec_.exchanges) {
    auto dst = static_cast<int>(w.destinations.below(static_cast<uint64_t>(spec_.ranks)));
    w.sent_at = t;
    w.waiting = true;
    out.push_back(sim.create(rank, dst, spec_.request_bytes, kRequest, w.done));
  }
}

void RoundTrip::write_results(JsonWriter& json, const Sim& sim) const
{
  std::vector<double> sorted(rtt_us_);
  std::sort(sorted.begin(), sorted.end());
  double sum = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  std::vector<double> means(spec_.ranks), lc(spec_.ranks), ray(spec_.ranks);
  for (int r = 0; r < spec_.ranks; r++) {
    const double* mine = rtt_us_.data() + static_cast<size_t>(r) * spec_.exchanges;
    means[r] = keep(mine, spec_.exchanges, any).mean;
    lc[r] = keep(mine, spec_.exchanges, under_lc).mean;
    ray[r] = keep(mine, spec_.exchanges, under_ray).mean;
  }
  auto [mean_avg, mean_sd_] = mean_sd(means);
  auto [lc_avg, lc_sd] = mean_sd(lc);
  auto [ray_avg, ray_sd] = mean_sd(ray);
  (void)lc_sd;
  json.begin_object();
  json.key("rtt_us").begin_object();
  json.key("mean").value(sum / static_cast<double>(sorted.size()));
  json.key("p50").value(percentile(sorted, 50));
  json.key("p99").value(percentile(sorted, 99));
  json.key("min").value(sorted.front());
  json.key("max").value(sorted.back());
  json.end_object();
  json.key("per_rank_mean_us").begin_object();
  json.key("average").value(mean_avg);
  json.key("sd").value(mean_sd_);
  json.end_object();
  json.key("lc_average_of_averages_us").value(lc_avg);
  json.key("ray_average_for_all_ranks_us").value(ray_avg);
  json.key("ray_standard_deviation_us").value(ray_sd);
  if (routed_) {
    json.key("hops").begin_object();
    json.key("mean").value(static_cast<double>(sim.delivered_hops()) / static_cast<double>(sim.delivered_messages()));
    json.end_object();
    std::vector<double> relays(sim.relays().begin(), sim.relays().end());
    auto [relay_mean, relay_sd] = mean_sd(relays);
    json.key("relays").begin_object();
    json.key("mean").value(relay_mean);
    json.key("sd").value(relay_sd);
    json.key("max").value(*std::max_element(sim.relays().begin(), sim.relays().end()));
    json.end_object();
  }
  json.end_object();
}

void RoundTrip::write_per_rank(JsonWriter& json) const
{
  std::vector<int64_t> trips;
  std::vector<double> lc_mode, ray_mode, lc_mean, ray_mean;
  for (int r = 0; r < spec_.ranks; r++) {
    const double* mine = rtt_us_.data() + static_cast<size_t>(r) * spec_.exchanges;
    Kept lc = keep(mine, spec_.exchanges, under_lc);
    Kept ray = keep(mine, spec_.exchanges, under_ray);
    lc_mode.push_back(lc.mode);
    lc_mean.push_back(lc.mean);
    ray_mode.push_back(ray.mode);
    ray_mean.push_back(ray.mean);
    trips.push_back(spec_.exchanges);
  }
  json.begin_object();
  json.key("lc_mode_us").array(lc_mode);
  json.key("lc_mean_us").array(lc_mean);
  json.key("ray_mode_us").array(ray_mode);
  json.key("ray_mean_us").array(ray_mean);
  json.key("round_trips").array(trips);
  json.end_object();
}

}  // namespace hopsim
