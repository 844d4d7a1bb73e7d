// Words of L digits in base b whose next hop changes one digit, chosen by load counters
// load[position][symbol] (RayPlatform's load balancing), shared by polytope and torus.
// At run time every MPI rank keeps its own table (per_rank); RayPlatform's files are
// computed in one process with one table for all ranks (shared).
#pragma once

#include "common.hpp"

namespace hopsim::overlays {

class CountedWords : public Overlay {
public:
  CountedWords(int b, int L, bool shared) : b_(b), L_(L), shared_(shared), pow_(powers(b, L)) {
    if ((b & (b - 1)) == 0)
      while ((1 << shift_) < b) ++shift_;
  }
  int size() const override { return static_cast<int>(pow_[L_]); }
  int degree() const override { return b_; }
  int digits() const override { return L_; }
  std::vector<int> in_neighbors(int rank) const override { return out_neighbors(rank); }
  bool has_load_counters() const override { return true; }

protected:
  static constexpr int kMaxDigits = 32;  // n <= 2^31
  // Statistics make ~n^2 * L digit extractions: shifts when the base allows them.
  void split(uint32_t x, int* digit) const {
    if (shift_ > 0)
      for (int p = 0; p < L_; ++p, x >>= shift_) digit[p] = static_cast<int>(x & (b_ - 1));
    else
      for (int p = 0; p < L_; ++p, x /= b_) digit[p] = static_cast<int>(x % b_);
  }
  int with_digit(int x, const int* digit, int p, int symbol) const {
    return static_cast<int>(x + (symbol - digit[p]) * pow_[p]);
  }
  // Allocated on the first forwarded message: L*b counters per rank, or one table.
  uint32_t* loads_of(int rank) {
    const size_t table = static_cast<size_t>(L_) * b_;
    if (load_.empty()) load_.assign(shared_ ? table : static_cast<size_t>(size()) * table, 0);
    return load_.data() + (shared_ ? 0 : static_cast<size_t>(rank) * table);
  }
  uint32_t b_;
  int L_;
  bool shared_;
  int shift_ = 0;
  std::vector<int64_t> pow_;
  std::vector<uint32_t> load_;
};

}  // namespace hopsim::overlays
