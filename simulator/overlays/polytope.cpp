// polytope (Hamming graph H(L, b), the hypercube for b = 2) on n = b^L ranks: arcs join
// words that differ in exactly one digit. Next hop: among the differing positions, the
// one whose counter load[p][destination digit p] is lowest (ties: lowest p).
#include "counted_words.hpp"

#include <algorithm>

namespace hopsim::overlays {
namespace {

class Polytope final : public CountedWords {
public:
  using CountedWords::CountedWords;
  std::string family() const override { return "polytope"; }
  std::string label() const override { return overlay_label("polytope", static_cast<int>(b_), L_); }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    int c[kMaxDigits];
    split(rank, c);
    std::vector<int> out;
    for (int p = 0; p < L_; ++p)
      for (int s = 0; s < static_cast<int>(b_); ++s)
        if (s != c[p]) out.push_back(with_digit(rank, c, p, s));
    std::sort(out.begin(), out.end());
    return out;
  }
  int next_hop(int /*origin*/, int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    if (cur == dst) return dst;
    int c[kMaxDigits], t[kMaxDigits];
    split(cur, c);
    split(dst, t);
    uint32_t* load = loads_of(cur);
    int best_p = -1, best_s = 0;
    for (int p = 0; p < L_; ++p) {
      if (t[p] == c[p]) continue;
      if (best_p < 0 || load[p * b_ + t[p]] < load[best_p * b_ + best_s]) best_p = p, best_s = t[p];
    }
    ++load[best_p * b_ + best_s];
    return with_digit(cur, c, best_p, best_s);
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Polytope>(b_, L_, false); }
  std::unique_ptr<Overlay> fresh_with_shared_counters() const override {
    return std::make_unique<Polytope>(b_, L_, true);
  }
};

}  // namespace

std::unique_ptr<Overlay> make_polytope(int b, int L) { return std::make_unique<Polytope>(b, L, false); }

}  // namespace hopsim::overlays
