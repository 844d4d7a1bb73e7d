// Routes and route statistics over all n^2 ordered pairs, for every family.
#include "common.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <stdexcept>

namespace hopsim {
namespace {

void add_count(std::vector<int64_t>& counts, size_t index, int64_t amount = 1) {
  if (index >= counts.size()) counts.resize(index + 1, 0);
  counts[index] += amount;
}

// After each source (or destination) rank: the fraction done for whoever waits, and the
// point where a stop request is honoured (a rank costs at most milliseconds at 16384).
struct RankDone {
  ProgressCounter* progress;
  const std::atomic<bool>* stop;
  int n;
  void operator()(int ranks_done) const {
    if (progress != nullptr)
      progress->store(static_cast<int64_t>(kProgressScale * ranks_done / n), std::memory_order_relaxed);
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) throw WalkStopped();
  }
};

// Every pair walked hop by hop, s ascending then d ascending: needed when next hops move
// load counters (their order matters) or depend on the origin.
void walk_all_pairs(Overlay& walker, RouteStats& st, const RankDone& done) {
  const int n = walker.size();
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      size_t hops = 0;
      for (int cur = s; cur != d; ++hops) {
        cur = walker.next_hop(s, cur, d);
        if (cur != d) ++st.relays[cur];
      }
      add_count(st.route_lengths, hops);
    }
    done(s + 1);
  }
}

// The routes towards d form a tree whose parent links are the next hops: the size of the
// subtree under a rank counts the routes through it, so each destination costs n next
// hops instead of n routes.
void count_destination_trees(Overlay& walker, RouteStats& st, const RankDone& done) {
  const int n = walker.size();
  std::vector<int> parent(n), child_start(n + 1), children(n), order(n), hops(n);
  std::vector<int64_t> through(n);
  for (int d = 0; d < n; ++d) {
    std::fill(child_start.begin(), child_start.end(), 0);
    for (int v = 0; v < n; ++v)
      if (v != d) ++child_start[(parent[v] = walker.next_hop(v, v, d)) + 1];
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
      throw std::logic_error(walker.family() + ": some route towards rank " + std::to_string(d) + " loops");
    std::fill(through.begin(), through.end(), 1);
    for (int i = n - 1; i >= 1; --i) {
      const int v = order[i];
      st.relays[v] += through[v] - 1;
      through[parent[v]] += through[v];
      add_count(st.route_lengths, hops[v]);
    }
    done(d + 1);
  }
}

}  // namespace

std::vector<int> connection_list(const Overlay& overlay, int rank) {
  std::vector<int> list = overlay.in_neighbors(rank);
  auto at = std::lower_bound(list.begin(), list.end(), rank);
  if (at == list.end() || *at != rank) list.insert(at, rank);
  return list;
}

std::vector<int> route(Overlay& overlay, int s, int d) {
  overlays::check_rank(overlay, s, overlay.size());
  overlays::check_rank(overlay, d, overlay.size());
  std::vector<int> path{s};
  for (int cur = s; cur != d;) {
    cur = overlay.next_hop(s, cur, d);
    path.push_back(cur);
    if (static_cast<int>(path.size()) > overlay.size())
      throw std::logic_error(overlay.family() + ": the route from " + std::to_string(s) + " to " +
                             std::to_string(d) + " loops");
  }
  return path;
}

RouteStats route_statistics(const Overlay& overlay, bool shared_counters, ProgressCounter* progress,
                            const std::atomic<bool>* stop) {
  const int n = overlay.size();
  RouteStats st;
  st.relays.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    const size_t k = overlay.out_neighbors(r).size();
    st.arcs += static_cast<int64_t>(k);
    add_count(st.out_degree_counts, k);
  }
  add_count(st.route_lengths, 0, n);
  std::unique_ptr<Overlay> walker = shared_counters ? overlay.fresh_with_shared_counters() : overlay.fresh();
  const RankDone done{progress, stop, n};
  if (walker->has_load_counters() || walker->routes_depend_on_origin())
    walk_all_pairs(*walker, st, done);
  else
    count_destination_trees(*walker, st, done);
  const std::vector<int64_t>& lengths = st.route_lengths;
  st.diameter = static_cast<int>(lengths.size()) - 1;
  int64_t total = 0;
  for (size_t h = 0; h < lengths.size(); ++h) total += static_cast<int64_t>(h) * lengths[h];
  st.mean_hops = n > 1 ? static_cast<double>(total) / (static_cast<double>(n) * (n - 1)) : 0.0;
  return st;
}

RouteStats route_statistics_polled(const Overlay& overlay, bool shared_counters,
                                   const std::function<void(double)>& tick) {
  ProgressCounter progress{0};
  std::atomic<bool> stop{false};
  // std::async's future joins the worker in its destructor, however this function leaves.
  std::future<RouteStats> walk = std::async(std::launch::async, [&] {
    return route_statistics(overlay, shared_counters, &progress, &stop);
  });
  auto fraction = [&] { return static_cast<double>(progress.load(std::memory_order_relaxed)) / kProgressScale; };
  try {
    while (walk.wait_for(std::chrono::milliseconds(kProgressPollMs)) != std::future_status::ready)
      if (tick) tick(fraction());
    // The end reported, and an interrupt that came as the walk ended still wins.
    if (tick) tick(fraction());
  } catch (...) {
    stop.store(true, std::memory_order_relaxed);
    walk.wait();
    throw;
  }
  return walk.get();
}

}  // namespace hopsim
