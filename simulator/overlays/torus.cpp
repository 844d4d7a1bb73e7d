// torus (k-ary D-cube) on n = r^D ranks: arcs join words that differ by +-1 mod r in one
// digit. Next hop: one step along a shortest direction, the least-loaded candidate,
// positions ascending, the -1 step before the +1 step.
#include "counted_words.hpp"

#include <algorithm>

namespace hopsim::overlays {
namespace {

class Torus final : public CountedWords {
public:
  using CountedWords::CountedWords;
  std::string family() const override { return "torus"; }
  std::string label() const override { return overlay_label("torus", static_cast<int>(b_), L_); }
  // Radix 2 makes the -1 and +1 neighbours the same rank: listed once.
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    int c[kMaxDigits];
    split(rank, c);
    std::vector<int> out;
    for (int p = 0; p < L_; ++p) {
      out.push_back(with_digit(rank, c, p, (c[p] + b_ - 1) % b_));
      out.push_back(with_digit(rank, c, p, (c[p] + 1) % b_));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
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
    const int b = static_cast<int>(b_);
    int best_p = -1, best_s = 0;
    auto consider = [&](int p, int s) {
      if (best_p < 0 || load[p * b + s] < load[best_p * b + best_s]) best_p = p, best_s = s;
    };
    for (int p = 0; p < L_; ++p) {
      if (c[p] == t[p]) continue;
      const int down = (c[p] - t[p] + b) % b, up = (t[p] - c[p] + b) % b;
      if (down <= up) consider(p, (c[p] + b - 1) % b);
      if (up <= down) consider(p, (c[p] + 1) % b);
    }
    ++load[best_p * b + best_s];
    return with_digit(cur, c, best_p, best_s);
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Torus>(b_, L_, false); }
  std::unique_ptr<Overlay> fresh_with_shared_counters() const override {
    return std::make_unique<Torus>(b_, L_, true);
  }
};

}  // namespace

std::unique_ptr<Overlay> make_torus(int r, int D) { return std::make_unique<Torus>(r, D, false); }

}  // namespace hopsim::overlays
