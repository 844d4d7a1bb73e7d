// make_overlay: the family named, at the size and degree checked by overlays/sizes.cpp.
// Each family's rules are in its own file under simulator/overlays/ (docs/overlays.md).
#include "overlay.hpp"

#include "overlays/common.hpp"

namespace hopsim {

std::unique_ptr<Overlay> make_overlay(const std::string& family, int n, int degree, uint64_t seed) {
  const OverlayShape s = overlay_shape(family, n, degree);
  if (family == "complete") return overlays::make_complete(n);
  if (family == "group") return overlays::make_group(n);
  if (family == "debruijn") return overlays::make_debruijn(s.degree, s.digits);
  if (family == "kautz") return overlays::make_kautz(s.degree, s.digits);
  if (family == "polytope" || family == "hypercube") return overlays::make_polytope(s.degree, s.digits);
  if (family == "torus") return overlays::make_torus(s.degree, s.digits);
  if (family == "random") return overlays::make_seeded_random(n, seed);
  if (family == "ray-random") return overlays::make_ray_random(n);
  throw OverlayError("unknown overlay family '" + family + "'");
}

std::unique_ptr<Overlay> make_table_overlay(int n, const std::vector<std::pair<int, int>>& arcs, uint64_t seed,
                                            const std::string& family) {
  if (n < 1) throw OverlayError(family + ": the number of ranks must be positive (got " + std::to_string(n) + ")");
  if (n > overlays::kMaxTableRanks)
    throw OverlayError(family + ": " + std::to_string(n) + " ranks do not fit (next-hop tables need n^2 entries; at most " +
                       std::to_string(overlays::kMaxTableRanks) + ")");
  for (auto [u, v] : arcs)
    if (u < 0 || u >= n || v < 0 || v >= n)
      throw OverlayError(family + ": arc (" + std::to_string(u) + ", " + std::to_string(v) +
                         ") names a rank outside 0.." + std::to_string(n - 1));
  return overlays::make_table(family, n, arcs, seed);
}

}  // namespace hopsim
