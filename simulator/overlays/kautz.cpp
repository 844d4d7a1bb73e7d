// Kautz K(d, D) on n = (d+1) d^(D-1) ranks: words of D digits in base d+1 with no two
// equal adjacent digits, rank r being the r-th such word in integer order; arcs and next
// hops are de Bruijn's shift in base d+1, mapped through that enumeration.
#include "common.hpp"
#include "shift_routing.hpp"

namespace hopsim::overlays {
namespace {

// With the leading digit fixed, every later digit has d choices, so ranking and
// unranking are mixed-radix conversions and no table is needed.
class Kautz final : public Overlay {
public:
  Kautz(int d, int D) : d_(d), D_(D), pow_(powers(d + 1, D)), dpow_(powers(d, D)) {}
  std::string family() const override { return "kautz"; }
  std::string label() const override { return overlay_label("kautz", d_, D_); }
  int size() const override { return static_cast<int>((d_ + 1) * dpow_[D_ - 1]); }
  int degree() const override { return d_; }
  int digits() const override { return D_; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    const int64_t w = word(rank), top = w / pow_[D_ - 1];
    std::vector<int> out;
    for (int64_t x = 0; x <= d_; ++x)
      if (x != top) out.push_back(rank_of(w / (d_ + 1) + x * pow_[D_ - 1]));
    return out;
  }
  std::vector<int> in_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    const int64_t w = word(rank), low = w % (d_ + 1);
    std::vector<int> in;
    for (int64_t x = 0; x <= d_; ++x)
      if (x != low) in.push_back(rank_of(w % pow_[D_ - 1] * (d_ + 1) + x));
    return in;
  }
  int next_hop(int /*origin*/, int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    if (cur == dst) return dst;
    return rank_of(shift_next(word(cur), word(dst), d_ + 1, D_, pow_));
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Kautz>(*this); }

private:
  int64_t word(int64_t r) const {
    int64_t w = 0, above = -1;
    for (int p = D_ - 1; p >= 0; --p) {
      int64_t x = r / dpow_[p];
      r %= dpow_[p];
      if (above >= 0 && x >= above) ++x;
      w += x * pow_[p];
      above = x;
    }
    return w;
  }
  int rank_of(int64_t w) const {
    int64_t r = 0, above = -1;
    for (int p = D_ - 1; p >= 0; --p) {
      int64_t x = w / pow_[p] % (d_ + 1);
      r += (x - (above >= 0 && above < x ? 1 : 0)) * dpow_[p];
      above = x;
    }
    return static_cast<int>(r);
  }
  int d_, D_;
  std::vector<int64_t> pow_, dpow_;
};

}  // namespace

std::unique_ptr<Overlay> make_kautz(int d, int D) { return std::make_unique<Kautz>(d, D); }

}  // namespace hopsim::overlays
