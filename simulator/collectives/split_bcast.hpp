// The broadcasts that split the message (split_bcast.cpp): Open MPI's split binary tree
// and its binomial scatter + recursive-doubling allgather, unsegmented (4.1's fixed rules
// pass segsize 0). Every rank runs the same numbered steps, most of them empty, so that a
// message's tag is simply the step its receiver takes it in.
#pragma once

#include "schedule.hpp"

namespace hopsim::coll {

// ompi_coll_base_bcast_intra_split_bintree (coll_base_bcast.c, v4.1.4), root 0, count >= 2.
class BcastSplitBinary : public Schedule {
public:
  BcastSplitBinary(int n, int64_t count, int64_t element) : n_(n), count_(count), element_(element) {}
  int steps(int) const override { return 4; }
  void step(int rank, int k, Step& out) const override;

private:
  int64_t half(int lr) const { return (lr == 0 ? count_ - count_ / 2 : count_ / 2) * element_; }
  int n_;
  int64_t count_, element_;
};

// ompi_coll_base_bcast_intra_scatter_allgather (coll_base_bcast.c, v4.1.4), root 0,
// count >= n.
class BcastScatterAllgather : public Schedule {
public:
  BcastScatterAllgather(int n, int64_t count, int64_t element);
  int steps(int) const override { return allgather_step(masks_); }
  void step(int rank, int k, Step& out) const override;

private:
  int64_t held(int first, int span) const;  // bytes of blocks [first, first + span)
  int allgather_step(int j) const { return 1 + masks_ + j + j * (j - 1) / 2; }
  void allgather(int v, int j, int k, Step& out) const;
  int n_;
  int64_t count_, element_, block_;
  int masks_;  // the masks 1, 2, 4, ... below n
};

}  // namespace hopsim::coll
