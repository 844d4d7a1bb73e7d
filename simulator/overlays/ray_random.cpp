// RayPlatform's random overlay, exactly (docs/overlays.md, "random"):
// - edges: the n(n-1)/2 pairs (i, j), i > j, numbered i(i-1)/2 + j, are shuffled 32
//   times with std::random_shuffle after srand(i^3 + 2i), i = 0..31, and the first
//   n * (int)(log n / log 2) / 2 are kept, as arcs both ways;
// - routes: the n^2 ordered pairs, numbered s*n + d, are shuffled 32 times after
//   srand(i^2 + i^3); pair after pair in that order, the route s -> d is read back from d
//   through shortest-path predecessors from s: a vertex's predecessor is, among its
//   in-neighbours one hop closer to s, the one with the fewest relay events so far (ties:
//   the lowest rank), and the route's inner ranks gain one relay event each before the
//   next pair. This is what RayPlatform's per-pair Dijkstra (unit weights, vertices taken
//   by distance then rank, a predecessor replaced only by one with strictly fewer
//   relays) computes.
// Routes therefore depend on the source: one route is stored per ordered pair.
#include "glibc_rand.hpp"
#include "table_routing.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace hopsim::overlays {
namespace {

constexpr int kShuffles = 32;

struct RayRoutes {
  int n = 0;
  int degree = 0;
  Adjacency arcs;                // symmetric: out- and in-neighbours are the same
  std::vector<uint32_t> offset;  // pair s*n+d: its inner ranks are inner[offset[p]..offset[p+1])
  std::vector<uint16_t> inner;
};

std::vector<std::pair<int, int>> ray_arcs(int n) {
  const int64_t all = static_cast<int64_t>(n) * (n - 1) / 2;
  std::vector<int32_t> id(static_cast<size_t>(all));
  std::iota(id.begin(), id.end(), 0);
  GlibcRand rng(1);
  for (unsigned i = 0; i < kShuffles; ++i) {
    rng.srand(i * i * i + 2 * i);
    random_shuffle_like_libstdcxx(id.data(), id.data() + id.size(), rng);
  }
  const int64_t m = random_edge_count(n);
  std::vector<std::pair<int, int>> arcs;
  arcs.reserve(static_cast<size_t>(2 * m));
  for (int64_t k = 0; k < m; ++k) {
    const int64_t t = id[static_cast<size_t>(k)];
    int64_t i = static_cast<int64_t>((1 + std::sqrt(1.0 + 8.0 * static_cast<double>(t))) / 2);
    while (i * (i - 1) / 2 > t) --i;
    while ((i + 1) * i / 2 <= t) ++i;
    const int j = static_cast<int>(t - i * (i - 1) / 2);
    arcs.emplace_back(static_cast<int>(i), j);
    arcs.emplace_back(j, static_cast<int>(i));
  }
  return arcs;
}

void compute_routes(RayRoutes& r) {
  const int n = r.n;
  const size_t pairs = static_cast<size_t>(n) * n;
  // dist[s * n + u]: hops from s to u.
  const std::vector<uint16_t> dist = all_distances("random (seed ray)", n, r.arcs, false);
  r.offset.assign(pairs + 1, 0);
  for (size_t p = 0; p < pairs; ++p) r.offset[p + 1] = r.offset[p] + (dist[p] > 1 ? dist[p] - 1 : 0);
  r.inner.assign(r.offset[pairs], 0);

  std::vector<uint32_t> order(pairs);
  std::iota(order.begin(), order.end(), 0u);
  GlibcRand rng(1);
  for (unsigned i = 0; i < kShuffles; ++i) {
    rng.srand(i * i + i * i * i);
    random_shuffle_like_libstdcxx(order.data(), order.data() + order.size(), rng);
  }

  std::vector<int64_t> relays(n, 0);
  for (uint32_t p : order) {
    const int s = static_cast<int>(p / n), d = static_cast<int>(p % n);
    if (dist[p] < 2) continue;  // s == d, or a direct arc: no relay
    const uint16_t* from_s = dist.data() + static_cast<size_t>(s) * n;
    uint16_t* slot = r.inner.data() + r.offset[p + 1];  // filled backwards from d
    for (int v = d;;) {
      int pred = -1;
      for (const int* u = r.arcs.begin(v); u != r.arcs.end(v); ++u)
        if (from_s[*u] + 1 == from_s[v] && (pred < 0 || relays[*u] < relays[pred])) pred = *u;
      if (pred == s) break;
      *--slot = static_cast<uint16_t>(pred);
      v = pred;
    }
    for (uint32_t k = r.offset[p]; k < r.offset[p + 1]; ++k) ++relays[r.inner[k]];
  }
}

class RayRandom final : public Overlay {
public:
  explicit RayRandom(std::shared_ptr<const RayRoutes> r) : r_(std::move(r)) {}
  std::string family() const override { return "random"; }
  std::string label() const override { return overlay_label("ray-random", r_->degree, 1); }
  int size() const override { return r_->n; }
  int degree() const override { return r_->degree; }
  int digits() const override { return 1; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    return std::vector<int>(r_->arcs.begin(rank), r_->arcs.end(rank));
  }
  std::vector<int> in_neighbors(int rank) const override { return out_neighbors(rank); }
  int next_hop(int origin, int cur, int dst) override {
    const int n = r_->n;
    check_rank(*this, origin, n);
    check_rank(*this, cur, n);
    check_rank(*this, dst, n);
    if (cur == dst) return dst;
    const size_t p = static_cast<size_t>(origin) * n + dst;
    const uint32_t first = r_->offset[p], last = r_->offset[p + 1];
    if (cur == origin) return first < last ? r_->inner[first] : dst;
    for (uint32_t k = first; k < last; ++k)
      if (r_->inner[k] == cur) return k + 1 < last ? r_->inner[k + 1] : dst;
    throw std::logic_error("random (seed ray): rank " + std::to_string(cur) + " is not on the route from " +
                           std::to_string(origin) + " to " + std::to_string(dst));
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<RayRandom>(r_); }
  bool routes_depend_on_origin() const override { return true; }

private:
  std::shared_ptr<const RayRoutes> r_;
};

}  // namespace

std::unique_ptr<Overlay> make_ray_random(int n) {
  std::vector<std::pair<int, int>> arcs = ray_arcs(n);
  const int lost = first_unreachable(n, arcs);
  if (lost >= 0)
    throw OverlayError("random (seed ray): RayPlatform's fixed draws leave the " + std::to_string(n) +
                       " ranks disconnected (rank " + std::to_string(lost) +
                       " cannot reach rank 0); a numeric seed draws another graph");
  auto r = std::make_shared<RayRoutes>();
  r->n = n;
  r->degree = static_cast<int>(std::llround(static_cast<double>(arcs.size()) / n));
  r->arcs = adjacency(n, std::move(arcs));
  compute_routes(*r);
  return std::make_unique<RayRandom>(std::move(r));
}

}  // namespace hopsim::overlays
