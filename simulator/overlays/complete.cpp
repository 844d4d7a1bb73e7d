// complete: every rank sends to every other rank directly; next hop = destination.
// RayPlatform lists no self-connection (n-1 per rank); the round-robin reception list
// (connection_list: in-neighbours plus itself) still holds every rank.
#include "common.hpp"

namespace hopsim::overlays {
namespace {

class Complete final : public Overlay {
public:
  explicit Complete(int n) : n_(n) {}
  std::string family() const override { return "complete"; }
  std::string label() const override { return overlay_label("complete", n_, 1); }
  int size() const override { return n_; }
  int degree() const override { return n_; }
  int digits() const override { return 1; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    std::vector<int> others;
    others.reserve(n_ - 1);
    for (int i = 0; i < n_; ++i)
      if (i != rank) others.push_back(i);
    return others;
  }
  std::vector<int> in_neighbors(int rank) const override { return out_neighbors(rank); }
  int next_hop(int /*origin*/, int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    return dst;
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Complete>(*this); }

private:
  int n_;
};

}  // namespace

std::unique_ptr<Overlay> make_complete(int n) { return std::make_unique<Complete>(n); }

}  // namespace hopsim::overlays
