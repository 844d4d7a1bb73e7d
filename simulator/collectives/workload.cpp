#include "collectives/workload.hpp"
#include "workloads.hpp"

#include <algorithm>
#include <cmath>

namespace hopsim {

namespace {

// IMB_settings.h: SECS_PER_SAMPLE (MSGSPERSAMPLE and OVERALL_VOL: ImbChain::imb_repetitions).
constexpr double kImbSecondsPerSample = 10;

coll::Collective collective_of(WorkloadKind k)
{
  switch (k) {
    case WorkloadKind::Alltoall: return coll::Collective::Alltoall;
    case WorkloadKind::Allreduce: return coll::Collective::Allreduce;
    case WorkloadKind::Allgather: return coll::Collective::Allgather;
    case WorkloadKind::Bcast: return coll::Collective::Bcast;
    case WorkloadKind::Reduce: return coll::Collective::Reduce;
    default: return coll::Collective::Barrier;
  }
}

bool reduces(coll::Collective c) { return c == coll::Collective::Allreduce || c == coll::Collective::Reduce; }

}  // namespace

int64_t CollectiveWorkload::imb_base_repetitions(int64_t bytes)
{
  return ImbChain::imb_repetitions(bytes);
}

std::vector<int64_t> CollectiveWorkload::imb_sizes(coll::Collective c)
{
  if (c == coll::Collective::Barrier)
    return {0};
  std::vector<int64_t> sizes{0};
  for (int64_t s = reduces(c) ? 4 : 1; s <= (4 << 20); s *= 2)
    sizes.push_back(s);
  return sizes;
}

CollectiveWorkload::CollectiveWorkload(const WorkloadSpec& spec, const PlatformSpec& platform)
    : spec_(spec), collective_(collective_of(spec.kind)), reduce_s_per_byte_(platform.reduce_ns_per_byte * 1e-9),
      eager_threshold_(platform.eager_threshold_bytes), element_(reduces(collective_of(spec.kind)) ? 4 : 1),
      work_(spec.ranks)
{
  if (spec_.sizes.empty() || collective_ == coll::Collective::Barrier)
    spec_.sizes = {0};
  t_us_.assign(spec_.sizes.size(), std::vector<double>(spec.ranks, 0.0));
  reps_.assign(spec_.sizes.size(), 0);
  algorithms_.assign(spec_.sizes.size(), "");
}

int64_t CollectiveWorkload::bytes_now() const { return spec_.sizes[size_index_]; }

// A new size: its algorithm (forced, or Open MPI's choice) and its schedule.
void CollectiveWorkload::start_size(Sim&)
{
  int64_t bytes = bytes_now();
  algorithm_ = spec_.algorithm.empty()
                   ? coll::openmpi_algorithm_name(collective_, coll::openmpi_decision(collective_, spec_.ranks, bytes))
                   : spec_.algorithm;
  algorithms_[size_index_] = algorithm_;
  schedule_ = coll::make_schedule(collective_, algorithm_, spec_.ranks, bytes, element_);
  reps_final_ = spec_.repetitions > 0;
  reps_[size_index_] = spec_.repetitions > 0 ? spec_.repetitions : imb_base_repetitions(bytes);
  for (int r = 0; r < spec_.ranks; r++) {
    RankWork& w = work_[r];
    w.rep = 0;
    w.elapsed_s = 0;
    w.early.clear();
  }
}

// Rank 0's repetitions stand for all (IMB's barrier keeps them together); IMB's time
// rule may change a size's repetitions after its first, so this can step back once.
double CollectiveWorkload::progress() const
{
  if (size_index_ >= spec_.sizes.size())
    return 1;
  double within = reps_[size_index_] > 0
                      ? std::min(1.0, static_cast<double>(work_[0].rep) / static_cast<double>(reps_[size_index_]))
                      : 0.0;
  return (static_cast<double>(size_index_) + within) / static_cast<double>(spec_.sizes.size());
}

bool CollectiveWorkload::wants_pass(int rank)
{
  if (size_index_ >= spec_.sizes.size())
    return false;
  const RankWork& w = work_[rank];
  if (rank == releaser_ && release_pending_)
    return true;
  if (w.deferred_compute_s > 0)
    return true;
  if (w.waiting)
    return false;
  return not w.posted || (w.recvs_got >= w.recvs_needed && w.sends_pending == 0);
}

void CollectiveWorkload::on_send_complete(Sim&, const Message& m)
{
  if (eager_threshold_ >= 0 && m.bytes > eager_threshold_)
    work_[m.from].sends_pending--;
}

double CollectiveWorkload::compute_seconds(int rank)
{
  double c = work_[rank].compute_s;
  work_[rank].compute_s = 0;
  return c;
}

// A message counted into the rank's current step; combining it costs host time.
void CollectiveWorkload::take(RankWork& w, int64_t bytes)
{
  w.recvs_got++;
  if (w.reduce)
    w.compute_s += reduce_s_per_byte_ * static_cast<double>(bytes);
}

void CollectiveWorkload::pass(Sim& sim, int rank, const Message* received, double, std::vector<uint32_t>& out)
{
  if (schedule_ == nullptr)
    start_size(sim);
  RankWork& w = work_[rank];
  if (rank == releaser_ && release_pending_) {
    // The last rank through IMB's barrier is at the repetition's start: release all.
    release_pending_ = false;
    releaser_ = -1;
    for (int r = 0; r < spec_.ranks; r++) {
      work_[r].waiting = false;
      if (r != rank)
        sim.wake(r);
    }
  }
  w.compute_s += w.deferred_compute_s;
  w.deferred_compute_s = 0;
  if (received != nullptr) {
    if (w.posted && received->seq == seq_of(w.rep, w.step)) {
      take(w, received->bytes);
    } else {
      auto it = std::find_if(w.early.begin(), w.early.end(), [&](const Early& e) { return e.seq == received->seq; });
      if (it == w.early.end())
        w.early.push_back({received->seq, 1, received->bytes});
      else {
        it->count++;
        it->bytes += received->bytes;
      }
    }
  }
  if (not w.waiting)
    advance(sim, rank, out);
}

// Posts the current step, and moves through every step that is complete.
void CollectiveWorkload::advance(Sim& sim, int rank, std::vector<uint32_t>& out)
{
  RankWork& w = work_[rank];
  for (;;) {
    if (not w.posted) {
      if (w.step == 0)
        w.steps = schedule_->steps(rank);
      if (w.step < w.steps) {
        schedule_->step(rank, w.step, scratch_);
        for (const coll::Send& s : scratch_.sends) {
          out.push_back(sim.create(rank, s.to, s.bytes, 0, seq_of(w.rep, s.tag)));
          if (eager_threshold_ >= 0 && s.bytes > eager_threshold_)
            w.sends_pending++;
        }
        w.recvs_needed = scratch_.recvs;
        w.recvs_got = 0;
        w.reduce = scratch_.reduce;
        int64_t seq = seq_of(w.rep, w.step);
        for (auto it = w.early.begin(); it != w.early.end(); ++it)
          if (it->seq == seq) {
            w.recvs_got += it->count;
            if (w.reduce && reduce_s_per_byte_ > 0) {
              w.deferred_compute_s += reduce_s_per_byte_ * static_cast<double>(it->bytes);
              w.early.erase(it);
              w.posted = true;
              return;  // the next pass combines them, then goes on
            }
            w.early.erase(it);
            break;
          }
      } else {
        w.recvs_needed = w.recvs_got = 0;
      }
      w.posted = true;
    }
    if (w.recvs_got < w.recvs_needed || w.sends_pending > 0)
      return;
    w.posted = false;
    if (w.step < w.steps)
      w.step++;
    if (w.step < w.steps)
      continue;
    // The repetition is over for this rank (MPI_Wtime after the call, in pass_done).
    w.finished_in_pass = true;
    w.step = 0;
    w.rep++;
    if (collective_ == coll::Collective::Barrier && w.rep < reps_[size_index_])
      continue;  // IMB times its barriers back to back
    w.waiting = true;
    return;
  }
}

void CollectiveWorkload::pass_done(Sim& sim, int rank, double t)
{
  RankWork& w = work_[rank];
  if (not w.finished_in_pass)
    return;
  w.finished_in_pass = false;
  if (not w.waiting)
    return;  // a barrier between repetitions of the Barrier benchmark
  int64_t reps_done = w.rep;
  bool barrier = collective_ == coll::Collective::Barrier;
  double elapsed = t - rep_start_;
  w.elapsed_s += elapsed;
  rep_end_max_ = std::max(rep_end_max_, t);
  if (++at_sync_ < spec_.ranks)
    return;
  // Everyone is through this repetition. IMB's time rule, after its first (timed) run:
  // at most 1 + 10 s / t_max repetitions, and no more than any smaller size had.
  at_sync_ = 0;
  if (not reps_final_ && not barrier) {
    double t_max = 0;
    for (const RankWork& x : work_)
      t_max = std::max(t_max, x.elapsed_s);
    int64_t reps = reps_[size_index_];
    if (t_max > 1e-8) {
      double allowed = std::floor(1 + kImbSecondsPerSample / t_max);
      if (allowed < static_cast<double>(reps))
        reps = static_cast<int64_t>(allowed);
    }
    reps = std::max<int64_t>(1, std::min(reps, min_reps_so_far_));
    reps_[size_index_] = reps;
    reps_final_ = true;
  }
  double start = rep_end_max_;
  if (reps_done >= reps_[size_index_]) {
    for (int r = 0; r < spec_.ranks; r++)
      t_us_[size_index_][r] = work_[r].elapsed_s * 1e6 / static_cast<double>(reps_[size_index_]);
    min_reps_so_far_ = std::min(min_reps_so_far_, reps_[size_index_]);
    if (++size_index_ == spec_.sizes.size()) {
      sim.finish();
      return;
    }
    start_size(sim);
  }
  rep_start_ = start;
  release_pending_ = true;
  releaser_ = rank;  // its next pass comes at `start`: it releases the others then
}

// IMB's columns for collectives: t_min, t_max, t_avg over the ranks of each rank's mean
// time per repetition (Barrier: no #bytes column).
void CollectiveWorkload::write_results(JsonWriter& json, const Sim&) const
{
  json.begin_object();
  json.key("rows").begin_array();
  for (size_t i = 0; i < spec_.sizes.size(); i++) {
    const auto& t = t_us_[i];
    double sum = 0;
    for (double v : t)
      sum += v;
    json.begin_object();
    json.key("bytes").value(spec_.sizes[i]);
    json.key("repetitions").value(reps_[i]);
    json.key("t_min_us").value(*std::min_element(t.begin(), t.end()));
    json.key("t_max_us").value(*std::max_element(t.begin(), t.end()));
    json.key("t_avg_us").value(sum / static_cast<double>(t.size()));
    json.key("algorithm").value(algorithms_[i]);
    json.end_object();
  }
  json.end_array();
  json.key("decision").value(std::string(spec_.algorithm.empty() ? "openmpi-4.1" : "forced"));
  json.end_object();
}

}  // namespace hopsim
