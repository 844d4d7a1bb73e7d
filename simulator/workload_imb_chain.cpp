#include "workloads.hpp"

#include <algorithm>

namespace hopsim {

namespace {
// IMB's MSGSPERSAMPLE and OVERALL_VOL.
constexpr int64_t kImbSamples = 1000;
constexpr int64_t kImbOverallVolume = 40LL << 20;
}  // namespace

int64_t ImbChain::imb_repetitions(int64_t bytes)
{
  if (bytes <= 0)
    return kImbSamples;
  return std::max<int64_t>(1, std::min(kImbSamples, kImbOverallVolume / bytes));
}

ImbChain::ImbChain(const WorkloadSpec& spec)
    : spec_(spec), sends_(spec.kind == WorkloadKind::Exchange ? 2 : 1), work_(spec.ranks),
      t_us_(spec.sizes.size(), std::vector<double>(spec.ranks))
{
}

int64_t ImbChain::repetitions() const
{
  return spec_.repetitions > 0 ? spec_.repetitions : imb_repetitions(spec_.sizes[size_index_]);
}

// Rank 0's repetitions stand for all: the chain keeps the ranks within one of each other.
double ImbChain::progress() const
{
  if (size_index_ >= spec_.sizes.size())
    return 1;
  return (static_cast<double>(size_index_) +
          static_cast<double>(work_[0].repetition) / static_cast<double>(repetitions())) /
         static_cast<double>(spec_.sizes.size());
}

bool ImbChain::repetition_complete(const RankWork& w) const
{
  return w.phase == Phase::Wait && w.received >= sends_ * (w.repetition + 1) && w.sends_pending == 0;
}

bool ImbChain::wants_pass(int rank)
{
  const RankWork& w = work_[rank];
  return size_index_ < spec_.sizes.size() && (w.phase == Phase::Post || repetition_complete(w));
}

// Exchange's two blocking receives: the left neighbour's message, then the right one's;
// after both, none until the sends are complete and the next repetition's are posted
// (a neighbour's next message waits, unexpected). With two ranks both neighbours are the
// other rank, whose messages are matched in the order it sent them.
int ImbChain::awaited_source(int rank) const
{
  if (sends_ != 2)
    return kAnySource;
  const RankWork& w = work_[rank];
  int n = spec_.ranks;
  switch (w.received - sends_ * w.repetition) {
    case 0:
      return (rank + n - 1) % n;
    case 1:
      return (rank + 1) % n;
    default:
      return kNoSource;
  }
}

void ImbChain::on_send_complete(Sim&, const Message& m) { work_[m.from].sends_pending--; }

void ImbChain::pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out)
{
  RankWork& w = work_[rank];
  if (received != nullptr)
    w.received++;
  if (repetition_complete(w)) {
    w.repetition++;
    if (w.repetition == repetitions()) {
      t_us_[size_index_][rank] = (t - size_start_) * 1e6 / static_cast<double>(repetitions());
      w.phase = Phase::Barrier;
      arrive_at_barrier(sim, rank, t);
      return;
    }
    w.phase = Phase::Post;
  }
  if (w.phase == Phase::Post) {
    int n = spec_.ranks;
    int64_t bytes = spec_.sizes[size_index_];
    // Exchange: right, then left (IMB's order of MPI_Isend); Sendrecv and PingPing:
    // right (PingPing's other rank).
    out.push_back(sim.create(rank, (rank + 1) % n, bytes, 0, w.repetition));
    if (sends_ == 2)
      out.push_back(sim.create(rank, (rank + n - 1) % n, bytes, 0, w.repetition));
    w.sends_pending += sends_;
    w.phase = Phase::Wait;
  }
}

// IMB separates sizes with a barrier; its cost is not part of any timing, so the next
// size starts when the last rank arrives.
void ImbChain::arrive_at_barrier(Sim& sim, int, double t)
{
  if (++at_barrier_ < spec_.ranks)
    return;
  at_barrier_ = 0;
  if (++size_index_ == spec_.sizes.size()) {
    sim.finish();
    return;
  }
  size_start_ = t;
  for (int r = 0; r < spec_.ranks; r++) {
    work_[r] = RankWork{};
    sim.wake(r);
  }
}

// IMB's columns: the time per repetition over the ranks (PingPing prints only the
// largest, as t[usec]), and the bandwidth from the largest time with MB = 10^6 bytes,
// as IMB's scale_bw counts a rank's bytes: Exchange 4 x size (two sends, two receives),
// Sendrecv 2 x (one of each), PingPing 1 x.
void ImbChain::write_results(JsonWriter& json, const Sim&) const
{
  bool pingping = spec_.kind == WorkloadKind::PingPing;
  double scale = spec_.kind == WorkloadKind::Exchange ? 4.0 : pingping ? 1.0 : 2.0;
  json.begin_object();
  json.key("rows").begin_array();
  for (size_t i = 0; i < spec_.sizes.size(); i++) {
    const auto& t = t_us_[i];
    double t_min = *std::min_element(t.begin(), t.end());
    double t_max = *std::max_element(t.begin(), t.end());
    double sum = 0;
    for (double v : t)
      sum += v;
    int64_t bytes = spec_.sizes[i];
    json.begin_object();
    json.key("bytes").value(bytes);
    json.key("repetitions").value(spec_.repetitions > 0 ? spec_.repetitions : imb_repetitions(bytes));
    if (pingping) {
      json.key("t_us").value(t_max);
    } else {
      json.key("t_min_us").value(t_min);
      json.key("t_max_us").value(t_max);
      json.key("t_avg_us").value(sum / static_cast<double>(t.size()));
    }
    json.key("mbytes_per_sec").value(t_max > 0 ? scale * static_cast<double>(bytes) / t_max : 0.0);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

}  // namespace hopsim
