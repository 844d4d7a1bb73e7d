// Table routing: any graph routed by shortest-path next-hop tables (user graphs and the
// seeded random family). Routes towards a destination form one shortest-path tree:
// next[dst * n + cur], 2 bytes per (cur, dst) pair.
#include "table_routing.hpp"
#include "seeded_order.hpp"

#include <algorithm>
#include <cmath>

namespace hopsim::overlays {

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

std::vector<uint16_t> all_distances(const std::string& family, int n, const Adjacency& rows, bool rows_are_in_arcs) {
  std::vector<uint16_t> dist(static_cast<size_t>(n) * n, kUnset);
  std::vector<int> queue(n);
  for (int root = 0; root < n; ++root) {
    uint16_t* row = dist.data() + static_cast<size_t>(root) * n;
    int head = 0, tail = 0;
    row[root] = 0;
    queue[tail++] = root;
    while (head < tail) {
      const int v = queue[head++];
      for (const int* u = rows.begin(v); u != rows.end(v); ++u)
        if (row[*u] == kUnset) {
          row[*u] = static_cast<uint16_t>(row[v] + 1);
          queue[tail++] = *u;
        }
    }
    if (tail < n) {
      const int u = static_cast<int>(std::find(row, row + n, kUnset) - row);
      const int from = rows_are_in_arcs ? u : root, to = rows_are_in_arcs ? root : u;
      throw OverlayError(family + ": rank " + std::to_string(from) + " cannot reach rank " + std::to_string(to) +
                         " (every rank must reach every other)");
    }
  }
  return dist;
}

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

namespace {

struct TableData {
  std::string family;
  int n = 0;
  int degree = 0;
  Adjacency out, in;
  std::vector<uint16_t> next;  // next[dst * n + cur]: the routes towards dst side by side
};

// Pairs in a seeded shuffled order; each pair follows the next hops already fixed and
// fixes the missing ones. Among the neighbours one hop closer to the destination, take
// the one that carries fewer relays so far, then the lower rank. Entries are never
// revised, so every route towards a destination is a path of one shortest-path tree
// (RayPlatform's own random graph routes per pair instead: ray_random.cpp).
void fill_next_hops(TableData& t, uint64_t seed) {
  const int n = t.n;
  const std::vector<uint16_t> dist = all_distances(t.family, n, t.in, true);
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
  std::string label() const override {
    return t_->family == "random" ? overlay_label("random", t_->degree, 1) : t_->family + " graph";
  }
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
  int next_hop(int /*origin*/, int cur, int dst) override {
    check_rank(*this, cur, size());
    check_rank(*this, dst, size());
    return t_->next[static_cast<size_t>(dst) * t_->n + cur];
  }
  // The tables never change after construction, so copies share them.
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<TableOverlay>(t_); }

private:
  std::shared_ptr<const TableData> t_;
};

}  // namespace

std::unique_ptr<Overlay> make_table(const std::string& family, int n, std::vector<std::pair<int, int>> arcs,
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

}  // namespace hopsim::overlays
