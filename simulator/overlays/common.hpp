// What the overlay families share inside the engine: rank checks, powers, and the
// constructors overlay.cpp dispatches to. Not part of the public interface (overlay.hpp).
#pragma once

#include "overlay.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hopsim::overlays {

constexpr int kGroupSize = 8;
// Table overlays hold n*n next hops of 2 bytes (and as many distances while they are
// built): 512 MiB each at this size, the most a shared machine should be asked for.
constexpr int kMaxTableRanks = 16384;
// RayPlatform's random graph stores one route per ordered pair and shuffles all n(n-1)/2
// candidate edges and all n^2 pairs 32 times each (docs/overlays.md: memory and time).
constexpr int kMaxRayRandomRanks = 4096;

// n is passed rather than read from o so that the final classes' calls skip the virtual
// dispatch (next_hop runs for every forwarded message).
inline void check_rank(const Overlay& o, int rank, int n) {
  if (rank < 0 || rank >= n)
    throw OverlayError(o.family() + ": rank " + std::to_string(rank) + " is outside 0.." + std::to_string(n - 1));
}

inline std::vector<int64_t> powers(int64_t b, int D) {
  std::vector<int64_t> p(D + 1, 1);
  for (int k = 1; k <= D; ++k) p[k] = p[k - 1] * b;
  return p;
}

// One constructor per family (parameters already checked by sizes.cpp).
std::unique_ptr<Overlay> make_complete(int n);
std::unique_ptr<Overlay> make_group(int n);
std::unique_ptr<Overlay> make_debruijn(int b, int D);
std::unique_ptr<Overlay> make_kautz(int d, int D);
std::unique_ptr<Overlay> make_polytope(int b, int L);
std::unique_ptr<Overlay> make_torus(int r, int D);
std::unique_ptr<Overlay> make_seeded_random(int n, uint64_t seed);
std::unique_ptr<Overlay> make_ray_random(int n);
// Shortest-path next-hop tables for any graph (table_routing.cpp).
std::unique_ptr<Overlay> make_table(const std::string& family, int n, std::vector<std::pair<int, int>> arcs,
                                    uint64_t seed);

// sizes.cpp: RayPlatform's edge count for its random graph, n * (int)(log n / log 2) / 2,
// computed with the same floating-point expression.
int64_t random_edge_count(int64_t n);

}  // namespace hopsim::overlays
