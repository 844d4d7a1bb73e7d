#include "workloads.hpp"

namespace hopsim {

namespace {
// osu_bw switches to its large-message counts above this size (LARGE_MESSAGE_SIZE).
constexpr int64_t kOsuLargeMessage = 8192;
// The acknowledgement rank 1 sends after each window.
constexpr int64_t kAckBytes = 4;
enum Kind { kData = 0, kAck = 1 };
}  // namespace

int64_t Bandwidth::osu_iterations(int64_t bytes) { return bytes > kOsuLargeMessage ? 20 : 100; }
int64_t Bandwidth::osu_skip(int64_t bytes) { return bytes > kOsuLargeMessage ? 2 : 10; }

Bandwidth::Bandwidth(const WorkloadSpec& spec) : spec_(spec) {}

// Explicit iterations replace the tool's counts and skip nothing unless a warmup is
// given, as pingpong's do.
int64_t Bandwidth::timed(int64_t bytes) const { return spec_.iterations > 0 ? spec_.iterations : osu_iterations(bytes); }
int64_t Bandwidth::skip(int64_t bytes) const
{
  if (spec_.warmup >= 0)
    return spec_.warmup;
  return spec_.iterations > 0 ? 0 : osu_skip(bytes);
}

double Bandwidth::progress() const
{
  if (size_index_ >= spec_.sizes.size())
    return 1;
  int64_t bytes = spec_.sizes[size_index_];
  return (static_cast<double>(size_index_) +
          static_cast<double>(iteration_) / static_cast<double>(skip(bytes) + timed(bytes))) /
         static_cast<double>(spec_.sizes.size());
}

bool Bandwidth::wants_pass(int rank) { return rank == 0 && not waiting_ && size_index_ < spec_.sizes.size(); }

// Rank 0's window goes out in one pass (MPI_Isend x window: each send pays its host
// costs), the next window on the pass that receives the acknowledgement. Rank 1 takes
// one message per pass, and answers in the pass that takes the window's last one.
void Bandwidth::pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out)
{
  if (rank != 0) {
    if (received != nullptr && ++window_received_ == spec_.window) {
      window_received_ = 0;
      out.push_back(sim.create(rank, 0, kAckBytes, kAck, received->seq));
    }
    return;
  }
  int64_t bytes = spec_.sizes[size_index_];
  if (received != nullptr) {
    waiting_ = false;
    iteration_++;
    if (iteration_ == skip(bytes) + timed(bytes)) {
      window_us_.push_back((t - timed_from_) * 1e6 / static_cast<double>(timed(bytes)));
      iteration_ = 0;
      if (++size_index_ == spec_.sizes.size()) {
        sim.finish();
        return;
      }
      bytes = spec_.sizes[size_index_];
    }
  }
  if (iteration_ == skip(bytes))
    timed_from_ = t;
  waiting_ = true;
  for (int64_t j = 0; j < spec_.window; j++)
    out.push_back(sim.create(0, 1, bytes, kData, iteration_));
}

// osu_bw prints size / 10^6 x iterations x window / time: bytes per microsecond.
void Bandwidth::write_results(JsonWriter& json, const Sim&) const
{
  json.begin_object();
  json.key("rows").begin_array();
  for (size_t i = 0; i < window_us_.size(); i++) {
    int64_t bytes = spec_.sizes[i];
    json.begin_object();
    json.key("bytes").value(bytes);
    json.key("window").value(spec_.window);
    json.key("iterations").value(timed(bytes));
    json.key("window_us").value(window_us_[i]);
    double moved = static_cast<double>(bytes) * static_cast<double>(spec_.window);
    json.key("bandwidth_mbytes_per_sec").value(window_us_[i] > 0 ? moved / window_us_[i] : 0.0);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

}  // namespace hopsim
