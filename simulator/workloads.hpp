// The traffic patterns of docs/workloads.md, each a Workload driven by the rank loops.
// Each writes its results in the shape of the JSON `results` object of the CLI.
#pragma once

#include "json_writer.hpp"
#include "rank_loop.hpp"
#include "rng.hpp"

#include <memory>
#include <vector>

namespace hopsim {

// latency_checker and Ray's network test: any-to-any request/reply round trips.
class RoundTrip : public Workload {
public:
  RoundTrip(const WorkloadSpec& spec, bool routed);
  bool wants_pass(int rank) override;
  void pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out) override;
  void write_results(JsonWriter& json, const Sim& sim) const override;
  bool has_per_rank() const override { return true; }
  void write_per_rank(JsonWriter& json) const override;
  double progress() const override;

private:
  struct RankWork {
    int64_t done = 0;
    bool waiting = false;
    double sent_at = 0;
    Rng destinations{0};
  };
  std::vector<int64_t> whole_us_of(int rank) const;

  WorkloadSpec spec_;
  bool routed_;
  std::vector<RankWork> work_;
  std::vector<double> rtt_us_;  // rank-major: rank r's round trips at r * exchanges
  std::vector<int32_t> whole_us_;  // the same, as the tools' clocks read them
  int finished_ranks_ = 0;
  int64_t exchanges_done_ = 0;  // over all ranks
};

// osu_latency: two ranks, ping-pong of each size, half the round trip.
class PingPong : public Workload {
public:
  explicit PingPong(const WorkloadSpec& spec);
  bool wants_pass(int rank) override;
  void pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out) override;
  void write_results(JsonWriter& json, const Sim& sim) const override;
  double progress() const override;
  // osu_latency's iteration counts: 10000 up to 8192 bytes, 1000 above, after warm-up.
  static int64_t osu_iterations(int64_t bytes);
  static int64_t osu_warmup(int64_t bytes);

private:
  int64_t timed(int64_t bytes) const;
  int64_t warmup(int64_t bytes) const;
  WorkloadSpec spec_;
  size_t size_index_ = 0;
  int64_t iteration_ = 0;  // warm-up included
  bool waiting_ = false;
  double timed_from_ = 0;
  std::vector<double> latency_us_;
};

// osu_bw: two ranks; rank 0 posts a window of non-blocking sends, waits for them, then
// receives a 4-byte acknowledgement that rank 1 sends once it has the whole window.
class Bandwidth : public Workload {
public:
  explicit Bandwidth(const WorkloadSpec& spec);
  bool wants_pass(int rank) override;
  void pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out) override;
  bool posts_receives_early(int rank) const override { return rank == 1; }
  void write_results(JsonWriter& json, const Sim& sim) const override;
  double progress() const override;
  // osu_bw's counts: 100 windows after 10 skipped up to 8192 bytes, 20 after 2 above.
  static int64_t osu_iterations(int64_t bytes);
  static int64_t osu_skip(int64_t bytes);

private:
  int64_t timed(int64_t bytes) const;
  int64_t skip(int64_t bytes) const;

  WorkloadSpec spec_;
  size_t size_index_ = 0;
  int64_t iteration_ = 0;  // skipped windows included
  bool waiting_ = false;
  double timed_from_ = 0;
  int64_t window_received_ = 0;  // rank 1: messages of the current window
  std::vector<double> window_us_;
};

// IMB-MPI1's periodic-chain benchmarks, each repetition: post the sends, receive one
// message per send, wait for the sends. Exchange sends to both neighbours (right, then
// left) and receives from the left, then from the right (IMB_exchange.c: two MPI_Isend,
// two blocking MPI_Recv, MPI_Waitall); Sendrecv sends to the right one (receiving from
// the left), PingPing (2 ranks) to the other rank.
class ImbChain : public Workload {
public:
  explicit ImbChain(const WorkloadSpec& spec);
  bool wants_pass(int rank) override;
  void pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out) override;
  bool tracks_send_completion() const override { return true; }
  bool posts_before_receiving() const override { return true; }
  int awaited_source(int rank) const override;
  // IMB calls MPI_Recv once its MPI_Isend calls returned: its receive is posted from then.
  int posted_receive(int rank) const override
  {
    return work_[rank].phase == Phase::Wait ? awaited_source(rank) : kNoSource;
  }
  void on_send_complete(Sim& sim, const Message& m) override;
  void write_results(JsonWriter& json, const Sim& sim) const override;
  double progress() const override;
  // IMB's repetitions: 1000, fewer for large messages (40 MiB of volume per sample).
  static int64_t imb_repetitions(int64_t bytes);

private:
  enum class Phase { Post, Wait, Barrier };
  struct RankWork {
    Phase phase = Phase::Post;
    int64_t repetition = 0;
    int64_t received = 0;
    int sends_pending = 0;
  };
  bool repetition_complete(const RankWork& w) const;
  void arrive_at_barrier(Sim& sim, int rank, double t);
  int64_t repetitions() const;

  WorkloadSpec spec_;
  int sends_;  // per rank and repetition, and as many receives
  size_t size_index_ = 0;
  double size_start_ = 0;
  int at_barrier_ = 0;
  std::vector<RankWork> work_;
  std::vector<std::vector<double>> t_us_;  // [size][rank]: time per repetition
};

}  // namespace hopsim
