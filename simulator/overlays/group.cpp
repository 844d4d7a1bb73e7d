// group: groups of 8 consecutive ranks led by their lowest rank. All-to-all inside a
// group (self-connections listed, as RayPlatform lists them), leader <-> leader.
// Routes s -> leader(s) -> leader(d) -> d are the only shortest paths, so RayPlatform's
// per-pair shortest-path search gives the same routes.
#include "common.hpp"

#include <algorithm>

namespace hopsim::overlays {
namespace {

class Group final : public Overlay {
public:
  explicit Group(int n) : n_(n) {}
  std::string family() const override { return "group"; }
  std::string label() const override { return overlay_label("group", kGroupSize, 1); }
  int size() const override { return n_; }
  int degree() const override { return kGroupSize; }
  int digits() const override { return 1; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    const int lead = leader(rank);
    std::vector<int> out;
    if (rank == lead)
      for (int l = 0; l < lead; l += kGroupSize) out.push_back(l);
    for (int r = lead; r < std::min(lead + kGroupSize, n_); ++r) out.push_back(r);
    if (rank == lead)
      for (int l = lead + kGroupSize; l < n_; l += kGroupSize) out.push_back(l);
    return out;
  }
  // The relation is symmetric.
  std::vector<int> in_neighbors(int rank) const override { return out_neighbors(rank); }
  int next_hop(int /*origin*/, int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    if (leader(cur) == leader(dst)) return dst;
    if (cur != leader(cur)) return leader(cur);
    return leader(dst);
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Group>(*this); }

private:
  static int leader(int r) { return r - r % kGroupSize; }
  int n_;
};

}  // namespace

std::unique_ptr<Overlay> make_group(int n) { return std::make_unique<Group>(n); }

}  // namespace hopsim::overlays
