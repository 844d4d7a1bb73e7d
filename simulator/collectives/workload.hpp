// IMB-MPI1's collective benchmarks (Alltoall, Allreduce, Allgather, Bcast, Reduce,
// Barrier) on a schedule of point-to-point messages (schedule.hpp), driven by the rank
// loops like any other workload: one implementation whatever the transport.
#pragma once

#include "rank_loop.hpp"
#include "schedule.hpp"

#include <memory>
#include <string>
#include <vector>

namespace hopsim {

class CollectiveWorkload : public Workload {
public:
  CollectiveWorkload(const WorkloadSpec& spec, const PlatformSpec& platform);
  bool wants_pass(int rank) override;
  void pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out) override;
  double compute_seconds(int rank) override;
  void pass_done(Sim& sim, int rank, double t) override;
  bool posts_before_receiving() const override { return true; }
  bool posts_receives_early(int) const override { return true; }
  bool tracks_send_completion() const override { return true; }
  void on_send_complete(Sim& sim, const Message& m) override;
  void write_results(JsonWriter& json, const Sim& sim) const override;
  double progress() const override;

  // IMB's default repetitions before its time rule: MSGSPERSAMPLE (1000), fewer above
  // OVERALL_VOL / size (40 MiB).
  static int64_t imb_base_repetitions(int64_t bytes);
  // The sizes IMB sweeps: 0, then powers of two from 1 (4 for reductions: whole MPI_FLOATs).
  static std::vector<int64_t> imb_sizes(coll::Collective c);

private:
  struct Early {
    int64_t seq;
    int count;
    int64_t bytes;
  };
  struct RankWork {
    int64_t rep = 0;
    int step = 0;
    int steps = 0;
    bool posted = false;
    bool waiting = false;  // finished its repetition, waits for the others (IMB's barrier)
    int recvs_needed = 0;
    int recvs_got = 0;
    bool reduce = false;
    int sends_pending = 0;
    bool finished_in_pass = false;
    double compute_s = 0;
    // Combining messages that came before their step: done once the step's sends are
    // posted, so in the next pass (its sends leave first, as from MPI_Sendrecv).
    double deferred_compute_s = 0;
    double elapsed_s = 0;  // this size's timed repetitions, summed
    std::vector<Early> early;
  };
  static int64_t seq_of(int64_t rep, int tag) { return (rep << 32) | static_cast<int64_t>(tag); }
  void start_size(Sim& sim);
  void take(RankWork& w, int64_t bytes);
  void advance(Sim& sim, int rank, std::vector<uint32_t>& out);
  int64_t bytes_now() const;

  WorkloadSpec spec_;
  coll::Collective collective_;
  double reduce_s_per_byte_;
  int64_t eager_threshold_;
  int64_t element_;
  size_t size_index_ = 0;
  std::unique_ptr<coll::Schedule> schedule_;
  std::string algorithm_;  // the one running this size
  std::vector<std::string> algorithms_;  // per size
  std::vector<int64_t> reps_;            // per size: repetitions (final once decided)
  bool reps_final_ = false;
  int64_t min_reps_so_far_ = INT64_MAX;
  double rep_start_ = 0;
  double rep_end_max_ = 0;
  int at_sync_ = 0;
  bool release_pending_ = false;
  int releaser_ = -1;
  coll::Step scratch_;
  std::vector<RankWork> work_;
  std::vector<std::vector<double>> t_us_;  // [size][rank]
};

}  // namespace hopsim
