#include "workloads.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "statistics.hpp"

namespace hopsim {

namespace {

enum Kind { kRequest = 0, kReply = 1 };

}  // namespace

RoundTrip::RoundTrip(const WorkloadSpec& spec, bool routed)
    : spec_(spec), routed_(routed), work_(spec.ranks), rtt_us_(static_cast<size_t>(spec.ranks) * spec.exchanges),
      whole_us_(static_cast<size_t>(spec.ranks) * spec.exchanges)
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

double RoundTrip::progress() const
{
  return static_cast<double>(exchanges_done_) / (static_cast<double>(spec_.ranks) * static_cast<double>(spec_.exchanges));
}

void RoundTrip::pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out)
{
  RankWork& w = work_[rank];
  bool reply_now = false;
  if (received != nullptr) {
    if (received->kind == kRequest) {
      out.push_back(sim.create(rank, received->origin, spec_.reply_bytes, kReply, received->seq));
    } else {
      size_t at = static_cast<size_t>(rank) * spec_.exchanges + w.done;
      rtt_us_[at] = (t - w.sent_at) * 1e6;
      whole_us_[at] = static_cast<int32_t>(whole_us_between(w.sent_at, t));
      w.done++;
      exchanges_done_++;
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

std::vector<int64_t> RoundTrip::whole_us_of(int rank) const
{
  auto first = whole_us_.begin() + static_cast<ptrdiff_t>(rank) * spec_.exchanges;
  return {first, first + spec_.exchanges};
}

void RoundTrip::write_results(JsonWriter& json, const Sim& sim) const
{
  std::vector<double> sorted(rtt_us_);
  std::sort(sorted.begin(), sorted.end());
  double sum = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  std::vector<double> means(spec_.ranks), lc(spec_.ranks);
  std::vector<int64_t> ray(spec_.ranks);
  for (int r = 0; r < spec_.ranks; r++) {
    const double* mine = rtt_us_.data() + static_cast<size_t>(r) * spec_.exchanges;
    means[r] = std::accumulate(mine, mine + spec_.exchanges, 0.0) / static_cast<double>(spec_.exchanges);
    std::vector<int64_t> whole = whole_us_of(r);
    lc[r] = latency_checker_rank(whole).average;
    ray[r] = ray_average_latency(whole);
  }
  auto [mean_avg, mean_sd_] = mean_sd(means);
  RayAllRanks ray_all = ray_average_for_all_ranks(ray);
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
  json.key("lc_average_of_averages_us").value(latency_checker_average_of_averages(lc));
  json.key("ray_average_for_all_ranks_us").value(ray_all.average);
  json.key("ray_standard_deviation_us").value(ray_all.standard_deviation);
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
    // The peers a rank keeps (its round-robin list: in-neighbours and itself), so that a
    // study can weigh connections against hops without building the overlay again.
    std::vector<double> connections(spec_.ranks);
    for (int r = 0; r < spec_.ranks; r++)
      connections[r] = static_cast<double>(connection_list(*sim.overlay(), r).size());
    json.key("connections").begin_object();
    json.key("mean").value(mean_sd(connections).first);
    json.key("max").value(*std::max_element(connections.begin(), connections.end()));
    json.end_object();
  }
  json.end_object();
}

void RoundTrip::write_per_rank(JsonWriter& json) const
{
  std::vector<int64_t> trips, lc_mode, ray_mode, ray_mean;
  std::vector<double> lc_mean, plain_mean;
  for (int r = 0; r < spec_.ranks; r++) {
    std::vector<int64_t> whole = whole_us_of(r);
    LatencyCheckerRank lc = latency_checker_rank(whole);
    lc_mode.push_back(lc.mode);
    lc_mean.push_back(lc.average);
    ray_mode.push_back(ray_mode_latency(whole));
    ray_mean.push_back(ray_average_latency(whole));
    const double* mine = rtt_us_.data() + static_cast<size_t>(r) * spec_.exchanges;
    plain_mean.push_back(std::accumulate(mine, mine + spec_.exchanges, 0.0) / static_cast<double>(spec_.exchanges));
    trips.push_back(spec_.exchanges);
  }
  json.begin_object();
  json.key("lc_mode_us").array(lc_mode);
  json.key("lc_mean_us").array(lc_mean);
  json.key("ray_mode_us").array(ray_mode);
  json.key("ray_mean_us").array(ray_mean);
  json.key("mean_us").array(plain_mean);
  json.key("round_trips").array(trips);
  json.end_object();
}

}  // namespace hopsim
