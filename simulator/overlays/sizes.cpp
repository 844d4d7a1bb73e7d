// Which sizes each family takes, with which parameters, and the one-line errors that name
// the nearest valid sizes (docs/overlays.md, "Sizes and degrees").
#include "common.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>

namespace hopsim {
namespace {

using overlays::kGroupSize;
using overlays::kMaxRayRandomRanks;
using overlays::kMaxTableRanks;

constexpr int64_t kMaxRanks = INT_MAX;
// Ray passes -routing-graph-degree 2 unless the user gives one (Ray's code/NetworkTest).
constexpr int kRayDefaultDegree = 2;

// b^e, saturated to kMaxRanks + 1 so that sizes beyond int compare as "too large".
int64_t power(int64_t b, int e) {
  int64_t r = 1;
  for (int i = 0; i < e; ++i) {
    if (r > kMaxRanks / b) return kMaxRanks + 1;
    r *= b;
  }
  return r;
}

// RayPlatform's test, kept as is because the degree choice depends on it: 1 is a power
// of every base.
bool is_power_of(int64_t n, int64_t base) {
  while (n > 1) {
    if (n % base != 0) return false;
    n /= base;
  }
  return true;
}

int digits_for(int64_t n, int64_t base) {
  int k = 1;
  while (n > power(base, k)) ++k;
  return k;
}

int64_t kautz_size(int64_t d, int D) {
  int64_t p = power(d, D - 1);
  if (p > kMaxRanks) return kMaxRanks + 1;
  return std::min((d + 1) * p, kMaxRanks + 1);
}

enum class Family { Complete, DeBruijn, Kautz, Random, RayRandom, Group, Polytope, Torus };

const char* name_of(Family f) {
  switch (f) {
    case Family::Complete: return "complete";
    case Family::DeBruijn: return "debruijn";
    case Family::Kautz: return "kautz";
    case Family::Random: return "random";
    case Family::RayRandom: return "random (seed ray)";
    case Family::Group: return "group";
    case Family::Polytope: return "polytope";
    case Family::Torus: return "torus";
  }
  return "?";
}

Family parse_family(const std::string& family) {
  if (family == "complete") return Family::Complete;
  if (family == "debruijn") return Family::DeBruijn;
  if (family == "kautz") return Family::Kautz;
  if (family == "random") return Family::Random;
  if (family == "ray-random") return Family::RayRandom;
  if (family == "group") return Family::Group;
  if (family == "polytope" || family == "hypercube") return Family::Polytope;
  if (family == "torus") return Family::Torus;
  throw OverlayError("unknown overlay family '" + family +
                     "'; known: complete, debruijn, kautz, random, group, polytope, hypercube, torus");
}

bool has_free_degree(Family f) {
  return f == Family::DeBruijn || f == Family::Kautz || f == Family::Polytope || f == Family::Torus;
}

OverlayShape make_shape(int64_t n, int64_t degree, int digits) {
  return OverlayShape{static_cast<int>(n), static_cast<int>(degree), digits};
}

// RayPlatform's rule for a requested degree d (2 when none is given): start from d if n
// is a power of d, else from 1024; halve while >= n; take the largest base <= that value
// with n = base^k.
std::optional<OverlayShape> debruijn_shape(int64_t n, int degree) {
  const int d = degree != 0 ? degree : kRayDefaultDegree;
  int64_t max_base = 1024;
  if (is_power_of(n, d)) max_base = d;
  while (max_base >= n) max_base /= 2;
  for (int64_t b = max_base; b >= 2; --b)
    if (is_power_of(n, b)) return make_shape(n, b, digits_for(n, b));
  return std::nullopt;
}

// The requested d when n = (d+1) d^(D-1) for some D >= 2; with no request, as
// RayPlatform, the largest d in 2..1024 with D in 2..9.
std::optional<OverlayShape> kautz_shape(int64_t n, int degree) {
  if (degree >= 2) {
    for (int D = 2; kautz_size(degree, D) <= n; ++D)
      if (kautz_size(degree, D) == n) return make_shape(n, degree, D);
    return std::nullopt;
  }
  std::optional<OverlayShape> best;
  for (int d = 2; d <= 1024; ++d)
    for (int D = 2; D <= 9; ++D)
      if (kautz_size(d, D) == n) {
        best = make_shape(n, d, D);
        break;
      }
  return best;
}

// Polytope and torus: n = b^L with the requested base, 2 when none is requested
// (RayPlatform's default: the hypercube, and the torus of radix 2).
std::optional<OverlayShape> power_shape(int64_t n, int degree) {
  int64_t b = degree != 0 ? degree : 2;
  if (n < b || !is_power_of(n, b)) return std::nullopt;
  return make_shape(n, b, digits_for(n, b));
}

// Enough edges to connect n ranks at all, and tables that fit in memory.
std::optional<OverlayShape> random_shape(int64_t n, int64_t max_ranks) {
  int64_t m = overlays::random_edge_count(n);
  if (n > max_ranks || m < n - 1) return std::nullopt;
  return make_shape(n, std::llround(2.0 * static_cast<double>(m) / static_cast<double>(n)), 1);
}

std::optional<OverlayShape> shape_for(Family f, int64_t n, int degree) {
  if (n < 1) return std::nullopt;
  switch (f) {
    case Family::Complete: return make_shape(n, n, 1);  // the round-robin list: every rank
    case Family::Group: return make_shape(n, kGroupSize, 1);
    case Family::Random: return random_shape(n, kMaxTableRanks);
    case Family::RayRandom: return random_shape(n, kMaxRayRandomRanks);
    case Family::DeBruijn: return debruijn_shape(n, degree);
    case Family::Kautz: return kautz_shape(n, degree);
    case Family::Polytope:
    case Family::Torus: return power_shape(n, degree);
  }
  return std::nullopt;
}

// Every size a sparse family can take, ascending (a superset filtered by shape_for).
std::vector<int64_t> candidate_sizes(Family f, int degree) {
  std::vector<int64_t> sizes;
  if (f == Family::DeBruijn) {
    for (int64_t c = 2; c <= std::max<int64_t>(1024, degree); ++c)
      for (int k = 2; power(c, k) <= kMaxRanks; ++k) sizes.push_back(power(c, k));
  } else if (f == Family::Kautz) {
    if (degree >= 2) {
      for (int D = 2; kautz_size(degree, D) <= kMaxRanks; ++D) sizes.push_back(kautz_size(degree, D));
    } else {
      for (int d = 2; d <= 1024; ++d)
        for (int D = 2; D <= 9 && kautz_size(d, D) <= kMaxRanks; ++D) sizes.push_back(kautz_size(d, D));
    }
  } else {
    int64_t b = degree != 0 ? degree : 2;
    for (int L = 1; power(b, L) <= kMaxRanks; ++L) sizes.push_back(power(b, L));
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::pair<OverlayShape, OverlayShape> nearest(Family f, int64_t n, int degree) {
  OverlayShape below, above;
  if (f == Family::Complete || f == Family::Group || f == Family::Random || f == Family::RayRandom) {
    // Dense families: almost every size fits, so look at the neighbours one by one.
    int64_t top = f == Family::Random ? kMaxTableRanks : f == Family::RayRandom ? kMaxRayRandomRanks : kMaxRanks;
    for (int64_t m = std::min(n - 1, top); m >= 1; --m)
      if (auto s = shape_for(f, m, degree)) { below = *s; break; }
    for (int64_t m = std::max<int64_t>(n + 1, 1); m <= top; ++m)
      if (auto s = shape_for(f, m, degree)) { above = *s; break; }
    return {below, above};
  }
  for (int64_t m : candidate_sizes(f, degree)) {
    auto s = shape_for(f, m, degree);
    // With an explicit degree, only the sizes that keep it.
    if (!s || (degree != 0 && s->degree != degree)) continue;
    if (m < n) below = *s;
    if (m > n) {
      above = *s;
      break;
    }
  }
  return {below, above};
}

std::string parameters_of(Family f, const OverlayShape& s) {
  const std::string deg = std::to_string(s.degree), dig = std::to_string(s.digits);
  switch (f) {
    case Family::DeBruijn: return "b=" + deg + ", D=" + dig;
    case Family::Kautz: return "d=" + deg + ", D=" + dig;
    case Family::Polytope: return "b=" + deg + ", L=" + dig;
    case Family::Torus: return "r=" + deg + ", D=" + dig;
    default: return "";
  }
}

std::string size_text(Family f, const OverlayShape& s) {
  std::string p = parameters_of(f, s);
  return std::to_string(s.ranks) + (p.empty() ? "" : " (" + p + ")");
}

// The degrees that take n ranks as they are, ascending ("2, 4, 8"), or "".
std::string degrees_fitting(Family f, int64_t n) {
  std::string list;
  for (int64_t d = 2; d * d <= n; ++d) {  // b^2, (d+1)d and b^2 are the smallest sizes
    auto s = shape_for(f, n, static_cast<int>(d));
    if (s && s->degree == d) list += (list.empty() ? "" : ", ") + std::to_string(d);
  }
  return list;
}

[[noreturn]] void throw_does_not_fit(Family f, int64_t n, int degree) {
  std::string msg = std::string(name_of(f)) + ": " +
                    (degree != 0 && has_free_degree(f) ? "degree " + std::to_string(degree) + " does not fit " +
                                                             std::to_string(n) + " ranks"
                                                       : std::to_string(n) + " ranks do not fit");
  if (f == Family::Random || f == Family::RayRandom) {
    const int64_t top = f == Family::Random ? kMaxTableRanks : kMaxRayRandomRanks;
    const int64_t m = overlays::random_edge_count(n);
    msg += n > top ? " (" + std::string(f == Family::Random ? "next-hop tables need n^2 entries" : "one route per ordered pair") +
                         "; at most " + std::to_string(top) + ")"
                   : " (" + std::to_string(m) + (m == 1 ? " edge" : " edges") + " cannot connect them)";
  }
  auto [below, above] = nearest(f, n, degree);
  if (below.ranks && above.ranks)
    msg += "; nearest sizes " + size_text(f, below) + " and " + size_text(f, above);
  else if (below.ranks || above.ranks)
    msg += "; nearest size " + size_text(f, below.ranks ? below : above);
  if (has_free_degree(f) && n <= kMaxRanks) {
    const std::string fitting = degrees_fitting(f, n);
    if (!fitting.empty()) msg += "; degrees that fit " + std::to_string(n) + " ranks: " + fitting;
    if (degree != 0)
      if (auto automatic = shape_for(f, n, 0))
        msg += "; degree 0 (RayPlatform's rule) builds " + parameters_of(f, *automatic);
  }
  throw OverlayError(msg);
}

OverlayShape checked_shape(Family f, int64_t n, int degree) {
  const std::string name = name_of(f);
  if (n < 1) throw OverlayError(name + ": the number of ranks must be positive (got " + std::to_string(n) + ")");
  if (degree < 0 || (has_free_degree(f) && degree == 1))
    throw OverlayError(name + ": the degree must be 0 (automatic) or at least 2 (got " + std::to_string(degree) + ")");
  auto shape = shape_for(f, n, degree);
  // An explicit degree is built as asked or refused: a sweep over degrees must never
  // record one graph under two labels (docs/overlays.md, "An explicit degree").
  if (!shape || (has_free_degree(f) && degree != 0 && shape->degree != degree)) throw_does_not_fit(f, n, degree);
  if (!has_free_degree(f) && degree != 0 && degree != shape->degree)
    throw OverlayError(name + ": the degree is fixed by the family (" + std::to_string(shape->degree) + " for " +
                       std::to_string(n) + " ranks); leave it at 0");
  return *shape;
}

}  // namespace

namespace overlays {

int64_t random_edge_count(int64_t n) {
  // RayPlatform: n * (int)(log(n) / log(2)) / 2. The floating-point quotient equals
  // floor(log2 n) for every n up to 2^24 (checked against libm), and it is what
  // RayPlatform computes, so it is kept as written.
  if (n < 2) return 0;
  const int per_vertex = static_cast<int>(std::log(static_cast<double>(n)) / std::log(2.0));
  return n * per_vertex / 2;
}

}  // namespace overlays

OverlayShape overlay_shape(const std::string& family, int n, int degree) {
  return checked_shape(parse_family(family), n, degree);
}

std::string overlay_label(const std::string& family, int degree, int digits) {
  const std::string k = std::to_string(degree), D = std::to_string(digits);
  switch (parse_family(family)) {
    case Family::Complete: return "complete graph";
    case Family::DeBruijn: return "de Bruijn B(" + k + ", " + D + ")";
    case Family::Kautz: return "Kautz K(" + k + ", " + D + ")";
    case Family::Random: return "random graph (mean degree " + k + ")";
    case Family::RayRandom: return "RayPlatform's random graph (mean degree " + k + ")";
    case Family::Group: return "groups of " + k;
    case Family::Polytope: return degree == 2 ? "hypercube Q" + D : "polytope H(" + D + ", " + k + ")";
    case Family::Torus: return "torus " + k + "-ary " + D + "-cube";
  }
  return family;
}

std::pair<OverlayShape, OverlayShape> nearest_sizes(const std::string& family, int n, int degree) {
  return nearest(parse_family(family), n, degree);
}

}  // namespace hopsim
