// Software-routed overlays (RayPlatform's routing graphs): generation and next hop.
// The one implementation of overlay routing in hopsim: the engine routes with it and
// Python asks it (through the bindings) for arcs, routes and statistics.
// Each family lives in simulator/overlays/<family>.cpp; the rules are in docs/overlays.md.
#pragma once

#include "progress.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hopsim {

// A family that cannot be built for the requested size, or a bad parameter.
// what() is a one-line message naming the nearest valid sizes where there are any.
class OverlayError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

class Overlay {
public:
  virtual ~Overlay() = default;
  virtual std::string family() const = 0;
  virtual int size() const = 0;
  // The family's degree parameter (de Bruijn base b, Kautz d, polytope base, torus radix,
  // ...); for complete: n, for random and user graphs: the mean out-degree rounded.
  virtual int degree() const = 0;
  // Words of D digits for de Bruijn, Kautz, polytope, torus; 1 for the others.
  virtual int digits() const = 0;
  // Ranks this rank sends to directly, ascending, self-loop included when the family has one.
  virtual std::vector<int> out_neighbors(int rank) const = 0;
  // Ranks that send directly to this rank, ascending.
  virtual std::vector<int> in_neighbors(int rank) const = 0;
  // The next rank on the route of a message that `origin` sent to dst, now at cur
  // (cur != dst). Only RayPlatform's random graph (routes computed per ordered pair)
  // reads origin; the other families route on (cur, dst) alone. Families with load
  // counters (polytope, torus) update the counters of cur: call it once per forwarded
  // message.
  virtual int next_hop(int origin, int cur, int dst) = 0;
  // The same overlay with its load counters reset (routes restart from the initial state).
  virtual std::unique_ptr<Overlay> fresh() const = 0;
  // The same, but with one load table shared by all ranks, as RayPlatform computes its
  // RelayEvents.txt in one process (polytope, torus; the others: fresh()).
  virtual std::unique_ptr<Overlay> fresh_with_shared_counters() const { return fresh(); }
  // True when next_hop depends on what was routed before (polytope, torus): routes then
  // depend on the order in which messages are forwarded.
  virtual bool has_load_counters() const { return false; }
  // True when the route to dst depends on the message's origin (RayPlatform's random).
  virtual bool routes_depend_on_origin() const { return false; }
  // A one-line human name with the parameters built, e.g. "de Bruijn B(2, 10)".
  virtual std::string label() const = 0;
};

// The parameters a family takes for a size: ranks, degree() and digits() of the overlay
// make_overlay would build. ranks == 0 stands for "no such size".
struct OverlayShape {
  int ranks = 0;
  int degree = 0;
  int digits = 0;
};

// The shape make_overlay(family, n, degree, seed) would build, without building it.
// Throws OverlayError exactly when make_overlay would (a random graph that the seed leaves
// disconnected excepted: that needs the graph).
OverlayShape overlay_shape(const std::string& family, int n, int degree);

// The human name of a family built with these parameters, e.g. "de Bruijn B(2, 10)"
// (what Overlay::label returns), without building it.
std::string overlay_label(const std::string& family, int degree, int digits);

// The valid sizes closest to n, strictly below and strictly above, for the family and the
// requested degree (0: automatic), with the parameters chosen for them.
std::pair<OverlayShape, OverlayShape> nearest_sizes(const std::string& family, int n, int degree);

// family: complete, debruijn, kautz, random, group, polytope (alias hypercube), torus,
// and ray-random: RayPlatform's own random graph and per-pair routes (fixed draws, seed
// ignored; `random` with seed "ray" in the CLI and Python).
// degree 0 means "choose as RayPlatform does" (docs/overlays.md); an explicit degree
// that the family cannot take for n is an error, never replaced. Throws OverlayError.
std::unique_ptr<Overlay> make_overlay(const std::string& family, int n, int degree, uint64_t seed);

// A user-supplied directed graph on ranks 0..n-1 (arcs as (from, to) pairs), routed by
// shortest paths stored as next-hop tables, ties broken as for the random family.
// Throws OverlayError if some rank cannot reach another.
std::unique_ptr<Overlay> make_table_overlay(int n, const std::vector<std::pair<int, int>>& arcs,
                                            uint64_t seed, const std::string& family = "user");

// The rank's reception list for round-robin: in-neighbours plus itself, ascending.
std::vector<int> connection_list(const Overlay& overlay, int rank);

// Statistics over all n^2 ordered pairs, routes computed with a fresh copy of the overlay
// (pairs in order s ascending, then d ascending); shared_counters: one load table for
// all ranks, as in RayPlatform's files (polytope, torus).
struct RouteStats {
  int64_t arcs = 0;                        // self-loops included, as RayPlatform counts them
  int diameter = 0;
  double mean_hops = 0;                    // over the n(n-1) pairs with s != d
  std::vector<int64_t> route_lengths;      // index = hops, over all n^2 pairs (s == d: 0)
  std::vector<int64_t> relays;             // relay events per rank
  std::vector<int64_t> out_degree_counts;  // index = out-degree
};
// progress, if given, holds the fraction of the pairs walked (progress.hpp), stored after
// each source (or destination) rank; stop, if given, is read at the same points and
// abandons the walk with WalkStopped once set.
class WalkStopped : public std::runtime_error {
public:
  WalkStopped() : std::runtime_error("route walk stopped") {}
};
RouteStats route_statistics(const Overlay& overlay, bool shared_counters = false,
                            ProgressCounter* progress = nullptr, const std::atomic<bool>* stop = nullptr);

// route_statistics in a worker thread that only stores its fraction done, as simulate()
// runs its child: the calling thread wakes every kProgressPollMs and calls tick(fraction)
// (0 to 1; once more after the walk, with 1), so tick runs on the caller's thread only.
// tick may throw to abandon the walk: the worker stops at its next rank and is joined
// before the exception leaves. Errors of the walk itself leave as they were thrown.
RouteStats route_statistics_polled(const Overlay& overlay, bool shared_counters,
                                   const std::function<void(double)>& tick);

// The route s, ..., d (both included; s == d gives {s}), computed on `overlay` (so it
// moves its counters).
std::vector<int> route(Overlay& overlay, int s, int d);

}  // namespace hopsim
