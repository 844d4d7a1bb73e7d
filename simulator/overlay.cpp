// Software-routed overlays (shared/reference/overlays.md): which sizes each family takes,
// the families themselves, shortest-path tables for random and user graphs, and route
// statistics over all ordered pairs.
#include "overlay.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <unordered_set>

namespace hopsim {
namespace {

constexpr int64_t kMaxRanks = INT_MAX;
// Table overlays hold n*n next hops of 2 bytes (and as many distances while they are
// built): 512 MiB each at this size, the most a shared machine should be asked for.
constexpr int kMaxTableRanks = 16384;
constexpr int kGroupSize = 8;

// ---------------------------------------------------------------------------------------
// Arithmetic on sizes

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

int floor_log2(int64_t n) {
  int k = 0;
  while (n >>= 1) ++k;
  return k;
}

int64_t kautz_size(int64_t d, int D) {
  int64_t p = power(d, D - 1);
  if (p > kMaxRanks) return kMaxRanks + 1;
  return std::min((d + 1) * p, kMaxRanks + 1);
}

int64_t random_edge_count(int64_t n) { return n * floor_log2(n) / 2; }

// ---------------------------------------------------------------------------------------
// Families and the shapes they take

enum class Family { Complete, DeBruijn, Kautz, Random, Group, Polytope, Torus };

const char* name_of(Family f) {
  switch (f) {
    case Family::Complete: return "complete";
    case Family::DeBruijn: return "debruijn";
    case Family::Kautz: return "kautz";
    case Family::Random: return "random";
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

// overlays.md: start from the requested degree if n is a power of it, else from 1024;
// halve while >= n; the largest base <= that value with n = base^k.
std::optional<OverlayShape> debruijn_shape(int64_t n, int degree) {
  int64_t max_base = 1024;
  if (degree >= 2 && is_power_of(n, degree)) max_base = degree;
  while (max_base >= n) max_base /= 2;
  for (int64_t b = max_base; b >= 2; --b)
    if (is_power_of(n, b)) return make_shape(n, b, digits_for(n, b));
  return std::nullopt;
}

// The requested d when n = (d+1) d^(D-1) for some D >= 2; otherwise, as RayPlatform, the
// largest d in 2..1024 with D in 2..9.
std::optional<OverlayShape> kautz_shape(int64_t n, int degree) {
  if (degree >= 2)
    for (int D = 2; kautz_size(degree, D) <= n; ++D)
      if (kautz_size(degree, D) == n) return make_shape(n, degree, D);
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

// Enough edges to connect n ranks at all, and a table that fits in memory.
std::optional<OverlayShape> random_shape(int64_t n) {
  int64_t m = random_edge_count(n);
  if (n > kMaxTableRanks || m < n - 1) return std::nullopt;
  return make_shape(n, std::llround(2.0 * static_cast<double>(m) / static_cast<double>(n)), 1);
}

std::optional<OverlayShape> shape_for(Family f, int64_t n, int degree) {
  if (n < 1) return std::nullopt;
  switch (f) {
    case Family::Complete: return make_shape(n, n, 1);
    case Family::Group: return make_shape(n, kGroupSize, 1);
    case Family::Random: return random_shape(n);
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
    for (int d = 2; d <= 1024; ++d)
      for (int D = 2; D <= 9 && kautz_size(d, D) <= kMaxRanks; ++D) sizes.push_back(kautz_size(d, D));
    if (degree >= 2)
      for (int D = 2; kautz_size(degree, D) <= kMaxRanks; ++D) sizes.push_back(kautz_size(degree, D));
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
  if (f == Family::Complete || f == Family::Group || f == Family::Random) {
    // Dense families: almost every size fits, so look at the neighbours one by one.
    int64_t top = f == Family::Random ? kMaxTableRanks : kMaxRanks;
    for (int64_t m = std::min(n - 1, top); m >= 1; --m)
      if (auto s = shape_for(f, m, degree)) { below = *s; break; }
    for (int64_t m = std::max<int64_t>(n + 1, 1); m <= top; ++m)
      if (auto s = shape_for(f, m, degree)) { above = *s; break; }
    return {below, above};
  }
  for (int64_t m : candidate_sizes(f, degree)) {
    auto s = shape_for(f, m, degree);
    if (!s) continue;
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

[[noreturn]] void throw_does_not_fit(Family f, int64_t n, int degree) {
  std::string msg = std::string(name_of(f)) + ": " + std::to_string(n) + " ranks do not fit";
  if (f == Family::Random)
    msg += n > kMaxTableRanks ? " (next-hop tables need n^2 entries; at most " + std::to_string(kMaxTableRanks) + ")"
                              : " (" + std::to_string(random_edge_count(n)) + (random_edge_count(n) == 1 ? " edge" : " edges") + " cannot connect them)";
  auto [below, above] = nearest(f, n, degree);
  if (below.ranks && above.ranks)
    msg += "; nearest sizes " + size_text(f, below) + " and " + size_text(f, above);
  else if (below.ranks || above.ranks)
    msg += "; nearest size " + size_text(f, below.ranks ? below : above);
  // The base is a free choice for these two: say so when another one takes n as it is.
  if (f == Family::Polytope || f == Family::Torus)
    for (int64_t b = 2; b * b <= n; ++b)
      if (is_power_of(n, b)) {
        msg += "; degree " + std::to_string(b) + " fits " + std::to_string(n) + " ranks (" +
               parameters_of(f, make_shape(n, b, digits_for(n, b))) + ")";
        break;
      }
  throw OverlayError(msg);
}

OverlayShape checked_shape(Family f, int64_t n, int degree) {
  const std::string name = name_of(f);
  if (n < 1) throw OverlayError(name + ": the number of ranks must be positive (got " + std::to_string(n) + ")");
  if (degree < 0 || (has_free_degree(f) && degree == 1))
    throw OverlayError(name + ": the degree must be 0 (automatic) or at least 2 (got " + std::to_string(degree) + ")");
  auto shape = shape_for(f, n, degree);
  if (!shape) throw_does_not_fit(f, n, degree);
  if (!has_free_degree(f) && degree != 0 && degree != shape->degree)
    throw OverlayError(name + ": the degree is fixed by the family (" + std::to_string(shape->degree) + " for " +
                       std::to_string(n) + " ranks); leave it at 0");
  return *shape;
}

// ---------------------------------------------------------------------------------------
// Deterministic randomness: the same seed gives the same graph and tables everywhere,
// which rules out std::uniform_int_distribution (its algorithm differs between libraries).

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() { return mix64(state_ += 0x9E3779B97F4A7C15ULL); }
  // Uniform in [0, bound): reject the lowest 2^64 mod bound values so that every residue
  // is equally likely.
  uint64_t below(uint64_t bound) {
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      uint64_t x = next();
      if (x >= threshold) return x % bound;
    }
  }

private:
  uint64_t state_;
};

// A seeded shuffle of 0..m-1 that needs no array (n^2 pairs at 16384 ranks would need
// 1 GiB): a balanced Feistel network over the smallest even number of bits that covers
// m, cycle-walking the values that fall outside.
class SeededOrder {
public:
  SeededOrder(uint64_t m, uint64_t seed) : m_(m) {
    while ((uint64_t(1) << (2 * half_)) < m) ++half_;
    mask_ = (uint64_t(1) << half_) - 1;
    SplitMix64 rng(seed ^ 0x6A09E667F3BCC909ULL);
    for (uint64_t& k : keys_) k = rng.next();
  }
  uint64_t operator()(uint64_t i) const {
    do i = encrypt(i);
    while (i >= m_);
    return i;
  }

private:
  uint64_t encrypt(uint64_t x) const {
    uint64_t left = x >> half_, right = x & mask_;
    for (uint64_t k : keys_) {
      uint64_t next_right = left ^ (mix64(right ^ k) & mask_);
      left = right;
      right = next_right;
    }
    return (left << half_) | right;
  }
  uint64_t m_;
  int half_ = 1;
  uint64_t mask_ = 1;
  uint64_t keys_[4] = {};
};

// ---------------------------------------------------------------------------------------
// Structured families: next hops computed on the fly, nothing stored per rank (except the
// load counters of polytope and torus, allocated on the first forwarded message).

// n is passed rather than read from o so that the final classes' calls skip the virtual
// dispatch (next_hop runs for every forwarded message).
void check_rank(const Overlay& o, int rank, int n) {
  if (rank < 0 || rank >= n)
    throw OverlayError(o.family() + ": rank " + std::to_string(rank) + " is outside 0.." + std::to_string(n - 1));
}

std::vector<int64_t> powers(int64_t b, int D) {
  std::vector<int64_t> p(D + 1, 1);
  for (int k = 1; k <= D; ++k) p[k] = p[k - 1] * b;
  return p;
}

class Complete final : public Overlay {
public:
  explicit Complete(int n) : n_(n) {}
  std::string family() const override { return "complete"; }
  int size() const override { return n_; }
  int degree() const override { return n_; }
  int digits() const override { return 1; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    std::vector<int> all(n_);
    for (int i = 0; i < n_; ++i) all[i] = i;
    return all;
  }
  std::vector<int> in_neighbors(int rank) const override { return out_neighbors(rank); }
  int next_hop(int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    return dst;
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Complete>(*this); }

private:
  int n_;
};

// Groups of 8 consecutive ranks; the lowest rank of a group is its leader.
class Group final : public Overlay {
public:
  explicit Group(int n) : n_(n) {}
  std::string family() const override { return "group"; }
  int size() const override { return n_; }
  int degree() const override { return kGroupSize; }
  int digits() const override { return 1; }
  // All-to-all inside a group, self-loops included as RayPlatform lists them, and
  // leader <-> leader: the relation is symmetric.
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
  std::vector<int> in_neighbors(int rank) const override { return out_neighbors(rank); }
  int next_hop(int cur, int dst) override {
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

// Shift routing on words of D digits in base b (overlays.md): the largest overlap ov
// between the tail of cur and the head of dst, then one shift bringing in digit ov of dst.
int64_t shift_overlap(int64_t cur, int64_t dst, int D, const std::vector<int64_t>& pow) {
  for (int k = D - 1; k >= 1; --k)
    if (cur / pow[D - k] == dst % pow[k]) return k;
  return 0;
}

int64_t shift_next(int64_t cur, int64_t dst, int64_t b, int D, const std::vector<int64_t>& pow) {
  int64_t ov = shift_overlap(cur, dst, D, pow);
  return cur / b + (dst / pow[ov]) % b * pow[D - 1];
}

class DeBruijn final : public Overlay {
public:
  DeBruijn(int b, int D) : b_(b), D_(D), pow_(powers(b, D)) {}
  std::string family() const override { return "debruijn"; }
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
  int next_hop(int cur, int dst) override {
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

// Kautz words: D digits in base d+1, no two equal adjacent digits. Rank r is the r-th
// word in integer order; with the leading digit fixed, every later digit has d choices,
// so ranking and unranking are mixed-radix conversions and no table is needed.
class Kautz final : public Overlay {
public:
  Kautz(int d, int D) : d_(d), D_(D), pow_(powers(d + 1, D)), dpow_(powers(d, D)) {}
  std::string family() const override { return "kautz"; }
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
  int next_hop(int cur, int dst) override {
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

// Words of L digits in base b whose next hop changes one digit, chosen by per-rank
// counters load[rank][position][symbol] (RayPlatform's load balancing).
class CountedWords : public Overlay {
public:
  CountedWords(int b, int L) : b_(b), L_(L), pow_(powers(b, L)) {
    if ((b & (b - 1)) == 0)
      while ((1 << shift_) < b) ++shift_;
  }
  int size() const override { return static_cast<int>(pow_[L_]); }
  int degree() const override { return b_; }
  int digits() const override { return L_; }
  std::vector<int> in_neighbors(int rank) const override { return out_neighbors(rank); }
  bool has_load_counters() const override { return true; }

protected:
  static constexpr int kMaxDigits = 32;  // n <= 2^31
  // Statistics make ~n^2 * L digit extractions: shifts when the base allows them.
  void split(uint32_t x, int* digit) const {
    if (shift_ > 0)
      for (int p = 0; p < L_; ++p, x >>= shift_) digit[p] = static_cast<int>(x & (b_ - 1));
    else
      for (int p = 0; p < L_; ++p, x /= b_) digit[p] = static_cast<int>(x % b_);
  }
  int with_digit(int x, const int* digit, int p, int symbol) const {
    return static_cast<int>(x + (symbol - digit[p]) * pow_[p]);
  }
  uint32_t* loads_of(int rank) {
    if (load_.empty()) load_.assign(static_cast<size_t>(size()) * L_ * b_, 0);
    return load_.data() + static_cast<size_t>(rank) * L_ * b_;
  }
  uint32_t b_;
  int L_;
  int shift_ = 0;
  std::vector<int64_t> pow_;
  std::vector<uint32_t> load_;
};

class Polytope final : public CountedWords {
public:
  using CountedWords::CountedWords;
  std::string family() const override { return "polytope"; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    int c[kMaxDigits];
    split(rank, c);
    std::vector<int> out;
    for (int p = 0; p < L_; ++p)
      for (int s = 0; s < static_cast<int>(b_); ++s)
        if (s != c[p]) out.push_back(with_digit(rank, c, p, s));
    std::sort(out.begin(), out.end());
    return out;
  }
  int next_hop(int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    if (cur == dst) return dst;
    int c[kMaxDigits], t[kMaxDigits];
    split(cur, c);
    split(dst, t);
    uint32_t* load = loads_of(cur);
    int best_p = -1, best_s = 0;
    for (int p = 0; p < L_; ++p) {
      if (t[p] == c[p]) continue;
      if (best_p < 0 || load[p * b_ + t[p]] < load[best_p * b_ + best_s]) best_p = p, best_s = t[p];
    }
    ++load[best_p * b_ + best_s];
    return with_digit(cur, c, best_p, best_s);
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Polytope>(b_, L_); }
};

class Torus final : public CountedWords {
public:
  using CountedWords::CountedWords;
  std::string family() const override { return "torus"; }
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
  int next_hop(int cur, int dst) override {
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
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<Torus>(b_, L_); }
};

// ---------------------------------------------------------------------------------------
// Table overlays: random graphs and user graphs, routed by shortest-path next-hop tables.

struct Adjacency {  // compressed rows, each row ascending and without duplicates
  std::vector<int> start, target;
  const int* begin(int r) const { return target.data() + start[r]; }
  const int* end(int r) const { return target.data() + start[r + 1]; }
};

Adjacency adjacency(int n, std::vector<std::pair<int, int>> arcs) {
  std::sort(arcs.begin(), arcs.end());
  arcs.erase(std::unique(arcs.begin(), arcs.end()), arcs.end());
  Adjacency a;
  a.start.assign(n + 1, 0);
  a.target.reserve(arcs.size());
  for (auto [u, v] : arcs) {
    ++a.start[u + 1];
    a.target.push_back(v);
  }
  for (int r = 0; r < n; ++r) a.start[r + 1] += a.start[r];
  return a;
}

struct TableData {
  std::string family;
  int n = 0;
  int degree = 0;
  Adjacency out, in;
  std::vector<uint16_t> next;  // next[dst * n + cur]: the routes towards dst side by side
};

constexpr uint16_t kUnset = 0xFFFF;

// Distances dist[d * n + u] from every u to every d, by breadth-first search from d over
// reversed arcs. Throws when some rank cannot reach another.
std::vector<uint16_t> all_distances(const TableData& t) {
  const int n = t.n;
  std::vector<uint16_t> dist(static_cast<size_t>(n) * n, kUnset);
  std::vector<int> queue(n);
  for (int d = 0; d < n; ++d) {
    uint16_t* row = dist.data() + static_cast<size_t>(d) * n;
    int head = 0, tail = 0;
    row[d] = 0;
    queue[tail++] = d;
    while (head < tail) {
      const int v = queue[head++];
      for (const int* u = t.in.begin(v); u != t.in.end(v); ++u)
        if (row[*u] == kUnset) {
          row[*u] = static_cast<uint16_t>(row[v] + 1);
          queue[tail++] = *u;
        }
    }
    if (tail < n) {
      const int u = static_cast<int>(std::find(row, row + n, kUnset) - row);
      throw OverlayError(t.family + ": rank " + std::to_string(u) + " cannot reach rank " + std::to_string(d) +
                         " (every rank must reach every other)");
    }
  }
  return dist;
}

// overlays.md: pairs in a seeded shuffled order; each pair follows the next hops already
// fixed and fixes the missing ones. Among the neighbours one hop closer to the
// destination (the predecessors of the breadth-first search from it), take the one that
// carries fewer relays so far, then the lower rank. Entries are never revised, so every
// route towards a destination is a path of one shortest-path tree.
void fill_next_hops(TableData& t, uint64_t seed) {
  const int n = t.n;
  const std::vector<uint16_t> dist = all_distances(t);
  t.next.assign(static_cast<size_t>(n) * n, kUnset);
  for (int r = 0; r < n; ++r) t.next[static_cast<size_t>(r) * n + r] = static_cast<uint16_t>(r);
  std::vector<int64_t> relays(n, 0);
  const uint64_t pairs = static_cast<uint64_t>(n) * n;
  const SeededOrder order(pairs, seed);
  for (uint64_t i = 0; i < pairs; ++i) {
    const uint64_t p = order(i);
    const int s = static_cast<int>(p / n), d = static_cast<int>(p % n);
    const uint16_t* to_d = dist.data() + static_cast<size_t>(d) * n;
    uint16_t* next_to_d = t.next.data() + static_cast<size_t>(d) * n;
    for (int cur = s; cur != d;) {
      uint16_t& hop = next_to_d[cur];
      if (hop == kUnset) {
        int best = -1;
        for (const int* v = t.out.begin(cur); v != t.out.end(cur); ++v)
          if (to_d[*v] + 1 == to_d[cur] && (best < 0 || relays[*v] < relays[best])) best = *v;
        hop = static_cast<uint16_t>(best);
      }
      cur = hop;
      if (cur != d) ++relays[cur];
    }
  }
}

class TableOverlay final : public Overlay {
public:
  explicit TableOverlay(std::shared_ptr<const TableData> t) : t_(std::move(t)) {}
  std::string family() const override { return t_->family; }
  int size() const override { return t_->n; }
  int degree() const override { return t_->degree; }
  int digits() const override { return 1; }
  std::vector<int> out_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    return std::vector<int>(t_->out.begin(rank), t_->out.end(rank));
  }
  std::vector<int> in_neighbors(int rank) const override {
    check_rank(*this, rank, size());
    return std::vector<int>(t_->in.begin(rank), t_->in.end(rank));
  }
  int next_hop(int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    return t_->next[static_cast<size_t>(dst) * t_->n + cur];
  }
  // The tables never change after construction, so copies share them.
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<TableOverlay>(t_); }

private:
  std::shared_ptr<const TableData> t_;
};

std::unique_ptr<Overlay> table_overlay(const std::string& family, int n, std::vector<std::pair<int, int>> arcs,
                                       uint64_t seed) {
  auto t = std::make_shared<TableData>();
  t->family = family;
  t->n = n;
  std::vector<std::pair<int, int>> reversed(arcs.size());
  std::transform(arcs.begin(), arcs.end(), reversed.begin(), [](auto a) { return std::make_pair(a.second, a.first); });
  t->out = adjacency(n, std::move(arcs));
  t->in = adjacency(n, std::move(reversed));
  t->degree = static_cast<int>(std::llround(static_cast<double>(t->out.target.size()) / n));
  fill_next_hops(*t, seed);
  return std::make_unique<TableOverlay>(std::move(t));
}

// n*floor(log2 n)/2 distinct undirected edges, uniform among the n(n-1)/2 pairs (Floyd's
// sampling), as arcs in both directions.
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

// The lowest rank that rank 0 cannot reach over the (symmetric) arcs, or -1.
int first_unreachable(int n, const std::vector<std::pair<int, int>>& arcs) {
  const Adjacency a = adjacency(n, arcs);
  std::vector<char> seen(n, 0);
  std::vector<int> stack{0};
  seen[0] = 1;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (const int* u = a.begin(v); u != a.end(v); ++u)
      if (!seen[*u]) seen[*u] = 1, stack.push_back(*u);
  }
  auto it = std::find(seen.begin(), seen.end(), 0);
  return it == seen.end() ? -1 : static_cast<int>(it - seen.begin());
}

std::unique_ptr<Overlay> random_overlay(int n, uint64_t seed) {
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
  return table_overlay("random", n, std::move(arcs), seed);
}

void add_count(std::vector<int64_t>& counts, size_t index, int64_t amount = 1) {
  if (index >= counts.size()) counts.resize(index + 1, 0);
  counts[index] += amount;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public interface

OverlayShape overlay_shape(const std::string& family, int n, int degree) {
  return checked_shape(parse_family(family), n, degree);
}

std::pair<OverlayShape, OverlayShape> nearest_sizes(const std::string& family, int n, int degree) {
  return nearest(parse_family(family), n, degree);
}

std::unique_ptr<Overlay> make_overlay(const std::string& family, int n, int degree, uint64_t seed) {
  const Family f = parse_family(family);
  const OverlayShape s = checked_shape(f, n, degree);
  switch (f) {
    case Family::Complete: return std::make_unique<Complete>(n);
    case Family::Group: return std::make_unique<Group>(n);
    case Family::DeBruijn: return std::make_unique<DeBruijn>(s.degree, s.digits);
    case Family::Kautz: return std::make_unique<Kautz>(s.degree, s.digits);
    case Family::Polytope: return std::make_unique<Polytope>(s.degree, s.digits);
    case Family::Torus: return std::make_unique<Torus>(s.degree, s.digits);
    case Family::Random: return random_overlay(n, seed);
  }
  throw OverlayError("unknown overlay family '" + family + "'");
}

std::unique_ptr<Overlay> make_table_overlay(int n, const std::vector<std::pair<int, int>>& arcs, uint64_t seed,
                                            const std::string& family) {
  if (n < 1) throw OverlayError(family + ": the number of ranks must be positive (got " + std::to_string(n) + ")");
  if (n > kMaxTableRanks)
    throw OverlayError(family + ": " + std::to_string(n) + " ranks do not fit (next-hop tables need n^2 entries; at most " +
                       std::to_string(kMaxTableRanks) + ")");
  for (auto [u, v] : arcs)
    if (u < 0 || u >= n || v < 0 || v >= n)
      throw OverlayError(family + ": arc (" + std::to_string(u) + ", " + std::to_string(v) +
                         ") names a rank outside 0.." + std::to_string(n - 1));
  return table_overlay(family, n, arcs, seed);
}

std::vector<int> connection_list(const Overlay& overlay, int rank) {
  std::vector<int> list = overlay.in_neighbors(rank);
  auto at = std::lower_bound(list.begin(), list.end(), rank);
  if (at == list.end() || *at != rank) list.insert(at, rank);
  return list;
}

std::vector<int> route(Overlay& overlay, int s, int d) {
  check_rank(overlay, s, overlay.size());
  check_rank(overlay, d, overlay.size());
  std::vector<int> path{s};
  for (int cur = s; cur != d;) {
    cur = overlay.next_hop(cur, d);
    path.push_back(cur);
    if (static_cast<int>(path.size()) > overlay.size())
      throw std::logic_error(overlay.family() + ": the route from " + std::to_string(s) + " to " +
                             std::to_string(d) + " loops");
  }
  return path;
}

RouteStats route_statistics(const Overlay& overlay) {
  const int n = overlay.size();
  RouteStats st;
  st.relays.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    const size_t k = overlay.out_neighbors(r).size();
    st.arcs += static_cast<int64_t>(k);
    add_count(st.out_degree_counts, k);
  }
  std::vector<int64_t>& lengths = st.route_lengths;
  add_count(lengths, 0, n);
  std::unique_ptr<Overlay> walker = overlay.fresh();
  if (walker->has_load_counters()) {
    // Routes depend on the counters, so replay them in the documented order.
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d) {
        if (s == d) continue;
        size_t hops = 0;
        for (int cur = s; cur != d; ++hops) {
          cur = walker->next_hop(cur, d);
          if (cur != d) ++st.relays[cur];
        }
        add_count(lengths, hops);
      }
  } else {
    // The routes towards d form a tree whose parent links are the next hops: the size of
    // the subtree under a rank counts the routes through it, so each destination costs n
    // next hops instead of n routes.
    std::vector<int> parent(n), child_start(n + 1), children(n), order(n), hops(n);
    std::vector<int64_t> through(n);
    for (int d = 0; d < n; ++d) {
      std::fill(child_start.begin(), child_start.end(), 0);
      for (int v = 0; v < n; ++v)
        if (v != d) ++child_start[(parent[v] = walker->next_hop(v, d)) + 1];
      for (int v = 0; v < n; ++v) child_start[v + 1] += child_start[v];
      std::vector<int> fill(child_start.begin(), child_start.end() - 1);
      for (int v = 0; v < n; ++v)
        if (v != d) children[fill[parent[v]]++] = v;
      int head = 0, tail = 0;
      order[tail++] = d;
      hops[d] = 0;
      while (head < tail) {
        const int v = order[head++];
        for (int c = child_start[v]; c < child_start[v + 1]; ++c) {
          hops[children[c]] = hops[v] + 1;
          order[tail++] = children[c];
        }
      }
      if (tail != n)
        throw std::logic_error(overlay.family() + ": some route towards rank " + std::to_string(d) + " loops");
      std::fill(through.begin(), through.end(), 1);
      for (int i = n - 1; i >= 1; --i) {
        const int v = order[i];
        st.relays[v] += through[v] - 1;
        through[parent[v]] += through[v];
        add_count(lengths, hops[v]);
      }
    }
  }
  st.diameter = static_cast<int>(lengths.size()) - 1;
  int64_t total = 0;
  for (size_t h = 0; h < lengths.size(); ++h) total += static_cast<int64_t>(h) * lengths[h];
  st.mean_hops = n > 1 ? static_cast<double>(total) / (static_cast<double>(n) * (n - 1)) : 0.0;
  return st;
}

}  // namespace hopsim
