#include "workloads.hpp"

namespace hopsim {

namespace {
// osu_latency switches to its large-message counts above this size.
constexpr int64_t kOsuLargeMessage = 8192;
}  // namespace

int64_t PingPong::osu_iterations(int64_t bytes) { return bytes > kOsuLargeMessage ? 1000 : 10000; }
int64_t PingPong::osu_warmup(int64_t bytes) { return bytes > kOsuLargeMessage ? 10 : 100; }

PingPong::PingPong(const WorkloadSpec& spec) : spec_(spec) {}

int64_t PingPong::timed(int64_t bytes) const { return spec_.iterations > 0 ? spec_.iterations : osu_iterations(bytes); }
int64_t PingPong::warmup(int64_t bytes) const
{
  if (spec_.warmup >= 0)
    return spec_.warmup;
  return spec_.iterations > 0 ? 0 : osu_warmup(bytes);
}

bool PingPong::wants_pass(int rank) { return rank == 0 && not waiting_ && size_index_ < spec_.sizes.size(); }

double PingPong::progress() const
{
  if (size_index_ >= spec_.sizes.size())
    return 1;
  int64_t bytes = spec_.sizes[size_index_];
  int64_t all = warmup(bytes) + timed(bytes);
  return (static_cast<double>(size_index_) + static_cast<double>(iteration_) / static_cast<double>(all)) /
         static_cast<double>(spec_.sizes.size());
}

// osu_latency is a blocking loop: each side answers in the pass that receives.
void PingPong::pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out)
{
  if (rank != 0) {
    if (received != nullptr)
      out.push_back(sim.create(rank, 0, received->bytes, 0, received->seq));
    return;
  }
  int64_t bytes = spec_.sizes[size_index_];
  if (received != nullptr) {
    waiting_ = false;
    iteration_++;
    if (iteration_ == warmup(bytes) + timed(bytes)) {
      latency_us_.push_back((t - timed_from_) * 1e6 / (2.0 * static_cast<double>(timed(bytes))));
      iteration_ = 0;
      if (++size_index_ == spec_.sizes.size()) {
        sim.finish();
        return;
      }
      bytes = spec_.sizes[size_index_];
    }
  }
  if (iteration_ == warmup(bytes))
    timed_from_ = t;
  waiting_ = true;
  out.push_back(sim.create(0, 1, bytes, 0, iteration_));
}

void PingPong::write_results(JsonWriter& json, const Sim&) const
{
  json.begin_object();
  json.key("rows").begin_array();
  for (size_t i = 0; i < latency_us_.size(); i++) {
    json.begin_object();
    json.key("bytes").value(spec_.sizes[i]);
    json.key("latency_us").value(latency_us_[i]);
    // bytes per microsecond is MB/s with MB = 10^6 bytes, as osu_bw counts.
    json.key("bandwidth_mbytes_per_sec").value(static_cast<double>(spec_.sizes[i]) / latency_us_[i]);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

}  // namespace hopsim
