// de Bruijn B(b, D) on n = b^D ranks: arc i -> floor(i/b) + x b^(D-1), x = 0..b-1, so the
// b constant words carry a self-loop (listed, as RayPlatform lists them). Shift routing.
#include "common.hpp"
#include "shift_routing.hpp"

namespace hopsim::overlays {
namespace {

class DeBruijn final : public Overlay {
public:
  DeBruijn(int b, int D) : b_(b), D_(D), pow_(powers(b, D)) {}
  std::string family() const override { return "debruijn"; }
  std::string label() const override { return overlay_label("debruijn", b_, D_); }
  int size() const override { return static_cast<int>(pow_[D_]); }
  int degree() const override { return b_; }
  int digits() const override { return D_; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    std::vector<int> out(b_);
    for (int x = 0; x < b_; ++x) out[x] = static_cast<int>(rank / b_ + x * pow_[D_ - 1]);
    return out;
  }
  std::vector<int> in_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    std::vector<int> in(b_);
    for (int x = 0; x < b_; ++x) in[x] = static_cast<int>(rank % pow_[D_ - 1] * b_ + x);
    return in;
  }
  int next_hop(int /*origin*/, int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    if (cur == dst) return dst;
    return static_cast<int>(shift_next(cur, dst, b_, D_, pow_));
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<DeBruijn>(*this); }

private:
  int b_, D_;
  std::vector<int64_t> pow_;
};

}  // namespace

std::unique_ptr<Overlay> make_debruijn(int b, int D) { return std::make_unique<DeBruijn>(b, D); }

}  // namespace hopsim::overlays
