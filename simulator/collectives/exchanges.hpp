// The schedules in which every rank runs the same steps (exchanges.cpp).
#pragma once

#include "schedule.hpp"

namespace hopsim::coll {

// A schedule over n ranks with one message size; subclasses say their steps.
class Symmetric : public Schedule {
public:
  Symmetric(int n, int64_t bytes) : n_(n), bytes_(bytes) {}

protected:
  int n_;
  int64_t bytes_;
};

#define HOPSIM_SYMMETRIC(Name)                                   \
  class Name : public Symmetric {                                \
  public:                                                        \
    using Symmetric::Symmetric;                                  \
    int steps(int rank) const override;                          \
    void step(int rank, int k, Step& out) const override;        \
  };
HOPSIM_SYMMETRIC(AlltoallLinear)
HOPSIM_SYMMETRIC(AlltoallPairwise)
HOPSIM_SYMMETRIC(AlltoallBruck)
HOPSIM_SYMMETRIC(AllgatherRing)
HOPSIM_SYMMETRIC(AllgatherRecursiveDoubling)
HOPSIM_SYMMETRIC(AllgatherBruck)
HOPSIM_SYMMETRIC(AllgatherNeighbor)
HOPSIM_SYMMETRIC(BarrierBruck)
HOPSIM_SYMMETRIC(BarrierTree)
#undef HOPSIM_SYMMETRIC

class AllreduceRecursiveDoubling : public Schedule {
public:
  AllreduceRecursiveDoubling(int n, int64_t bytes);
  int steps(int rank) const override;
  void step(int rank, int k, Step& out) const override;

private:
  int n_;
  int64_t bytes_;
  int adjsize_, extra_;
};

class AllreduceRing : public Schedule {
public:
  AllreduceRing(int n, int64_t count, int64_t element);
  int steps(int rank) const override;
  void step(int rank, int k, Step& out) const override;

private:
  int64_t block_bytes(int block) const;
  int n_;
  int64_t count_, element_;
};

// Rabenseifner's reduce-scatter by recursive halving, then either the allgather in reverse
// (Allreduce, coll_base_allreduce.c's redscat_allgather) or a binomial gather of the pieces
// to root 0 (Reduce, coll_base_reduce.c's redscat_gather).
class Rabenseifner : public Schedule {
public:
  enum class Tail { Allgather, GatherToRoot };
  Rabenseifner(int n, int64_t count, int64_t element, Tail tail);
  int steps(int rank) const override;
  void step(int rank, int k, Step& out) const override;

private:
  Tail tail_;
  int n_;
  int64_t count_, element_;
  int pof2_, rem_, nsteps_;
};

class BarrierRecursiveDoubling : public Schedule {
public:
  explicit BarrierRecursiveDoubling(int n);
  int steps(int rank) const override;
  void step(int rank, int k, Step& out) const override;

private:
  int n_, adjsize_;
};

}  // namespace hopsim::coll
