// random (seeded): n * floor(log2 n) / 2 distinct undirected edges drawn uniformly among
// the n(n-1)/2 pairs by hopsim's seed, routed by next-hop tables (table_routing.cpp).
// RayPlatform's own fixed draws and per-pair routes are ray_random.cpp.
#include "seeded_order.hpp"
#include "table_routing.hpp"

#include <cmath>
#include <unordered_set>

namespace hopsim::overlays {
namespace {

// Floyd's sampling of m pair indices, each as arcs in both directions.
std::vector<std::pair<int, int>> random_arcs(int n, uint64_t seed) {
  const uint64_t m = static_cast<uint64_t>(random_edge_count(n));
  const uint64_t all = static_cast<uint64_t>(n) * (n - 1) / 2;
  SplitMix64 rng(seed);
  std::unordered_set<uint64_t> chosen;
  chosen.reserve(2 * m);
  std::vector<std::pair<int, int>> arcs;
  arcs.reserve(2 * m);
  for (uint64_t j = all - m; j < all; ++j) {
    uint64_t t = rng.below(j + 1);
    if (!chosen.insert(t).second) {
      chosen.insert(j);
      t = j;
    }
    // Pair index t = i(i-1)/2 + k with k < i.
    int64_t i = static_cast<int64_t>((1 + std::sqrt(1.0 + 8.0 * static_cast<double>(t))) / 2);
    while (i * (i - 1) / 2 > static_cast<int64_t>(t)) --i;
    while ((i + 1) * i / 2 <= static_cast<int64_t>(t)) ++i;
    const int k = static_cast<int>(t - i * (i - 1) / 2);
    arcs.emplace_back(static_cast<int>(i), k);
    arcs.emplace_back(k, static_cast<int>(i));
  }
  return arcs;
}

}  // namespace

std::unique_ptr<Overlay> make_seeded_random(int n, uint64_t seed) {
  std::vector<std::pair<int, int>> arcs = random_arcs(n, seed);
  const int lost = first_unreachable(n, arcs);
  if (lost >= 0) {
    std::string msg = "random: seed " + std::to_string(seed) + " leaves the " + std::to_string(n) +
                      " ranks disconnected (rank " + std::to_string(lost) + " cannot reach rank 0)";
    for (uint64_t s = seed + 1; s <= seed + 1000; ++s)
      if (first_unreachable(n, random_arcs(n, s)) < 0) {
        msg += "; seed " + std::to_string(s) + " gives a connected graph";
        break;
      }
    throw OverlayError(msg);
  }
  return make_table("random", n, std::move(arcs), seed);
}

}  // namespace hopsim::overlays
