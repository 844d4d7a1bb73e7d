// A collective as a schedule of point-to-point messages (docs/workloads.md, "Collectives"):
// each rank runs a list of steps; a step posts its sends at its start (non-blocking, in
// order) and ends once its receives are in and its sends are complete. A message carries
// a tag, the receiver's step index, so that a message that comes early waits for its step.
// Schedules are generated one step at a time: at 4096 ranks a linear Alltoall has 16
// million messages per repetition, which are never all held at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hopsim::coll {

enum class Collective { Alltoall, Allreduce, Allgather, Bcast, Reduce, Barrier };

struct Send {
  int to;
  int64_t bytes;
  int tag;  // the receiver's step index
};

struct Step {
  std::vector<Send> sends;
  int recvs = 0;        // messages to receive (any source; each sender tags them for this step)
  bool reduce = false;  // the received bytes are combined into the local buffer (a host cost)
  void clear()
  {
    sends.clear();
    recvs = 0;
    reduce = false;
  }
};

class Schedule {
public:
  virtual ~Schedule() = default;
  virtual int steps(int rank) const = 0;
  // Fills `out` (cleared first) with step k of `rank`, 0 <= k < steps(rank).
  virtual void step(int rank, int k, Step& out) const = 0;
};

// What a run uses: the algorithm's name (as Open MPI's coll/tuned names it) and whether
// Open MPI's fixed decision chose it.
struct Choice {
  std::string algorithm;  // the schedule that runs
  std::string decided;    // what Open MPI 4.1's fixed rules pick ("" when forced)
};

Collective collective_from(const std::string& name);  // throws std::invalid_argument
const char* collective_name(Collective c);
// The algorithm names accepted for a collective (--algorithm).
std::vector<std::string> algorithms(Collective c);

// Open MPI 4.1.x's coll/tuned fixed decision (coll_tuned_decision_fixed.c), for a
// commutative operation (IMB's MPI_SUM): its algorithm number for the collective, the
// communicator size and the message size as Open MPI computes it (datatype size x count,
// per rank for Alltoall and Allgather).
int openmpi_decision(Collective c, int ranks, int64_t bytes);
// The name of Open MPI's algorithm number for the collective (coll_tuned_<x>_decision.c).
std::string openmpi_algorithm_name(Collective c, int number);

// The schedule of `algorithm` for `ranks` ranks and a message of `bytes` bytes (the
// user's buffer size: per destination for Alltoall, per rank for Allgather), root 0.
// `element_bytes` is the datatype size (4: IMB's MPI_FLOAT for reductions, 1 otherwise);
// an algorithm whose Open MPI implementation switches to another for small counts or odd
// sizes does so here too. Throws std::invalid_argument for an unknown algorithm.
std::unique_ptr<Schedule> make_schedule(Collective c, const std::string& algorithm, int ranks, int64_t bytes,
                                        int64_t element_bytes);

}  // namespace hopsim::coll
