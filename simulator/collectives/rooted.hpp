// The schedules along a tree rooted at one rank (rooted.cpp): Bcast, Reduce, the linear
// Barrier, and the composition of two schedules (reduce then bcast).
#pragma once

#include "schedule.hpp"
#include "trees.hpp"

namespace hopsim::coll {

// Bcast along a tree (coll_base_bcast.c's generic, unsegmented: Open MPI 4.1's fixed
// rules pass segsize 0): receive from the parent, then send to every child.
class TreeBcast : public Schedule {
public:
  TreeBcast(Tree tree, int n, int root, int64_t bytes) : tree_(tree), n_(n), root_(root), bytes_(bytes) {}
  int steps(int rank) const override;
  void step(int rank, int k, Step& out) const override;

private:
  Tree tree_;
  int n_, root_;
  int64_t bytes_;
};

// Reduce along a tree (coll_base_reduce.c's generic, unsegmented): receive and combine
// every child's vector, then send to the parent. The in-order binary tree is rooted at
// n-1, which then sends the result to the root.
class TreeReduce : public Schedule {
public:
  TreeReduce(Tree tree, int n, int root, int64_t bytes) : tree_(tree), n_(n), root_(root), bytes_(bytes) {}
  int steps(int rank) const override;
  void step(int rank, int k, Step& out) const override;

private:
  int tree_steps(int rank) const;
  int tree_root() const { return tree_ == Tree::InOrderBinary ? n_ - 1 : root_; }
  Tree tree_;
  int n_, root_;
  int64_t bytes_;
};

// basic_linear barrier: everyone sends to rank 0 and waits for its answer.
class BarrierLinear : public Schedule {
public:
  explicit BarrierLinear(int n) : n_(n) {}
  int steps(int) const override { return 2; }
  void step(int rank, int k, Step& out) const override;

private:
  int n_;
};

// first's steps, then second's (tags shifted by the receiver's steps in first).
class Sequence : public Schedule {
public:
  Sequence(std::unique_ptr<Schedule> first, std::unique_ptr<Schedule> second)
      : first_(std::move(first)), second_(std::move(second))
  {
  }
  int steps(int rank) const override { return first_->steps(rank) + second_->steps(rank); }
  void step(int rank, int k, Step& out) const override;

private:
  std::unique_ptr<Schedule> first_, second_;
};

// No message at all (a count of 0: Open MPI's MPI layer returns at once; one rank).
class Nothing : public Schedule {
public:
  int steps(int) const override { return 0; }
  void step(int, int, Step& out) const override { out.clear(); }
};

}  // namespace hopsim::coll
