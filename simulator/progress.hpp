// A run's progress, from the code that does the work to the thread that waits for it.
//
// simulate(): the engine runs each simulation in a forked child (engine.hpp), so the
// counter lives in a page mapped MAP_SHARED before the fork: the child's event loop
// stores the fraction done every few thousand events. route_statistics_polled(): the
// walk over all pairs runs in a worker thread that stores the fraction after each rank.
// Either way the waiting thread reads it each time it wakes (every kProgressPollMs) and
// hands it to the caller's tick; the worker never calls the caller, and nothing crosses
// per message or per pair.
#pragma once

#include <atomic>
#include <cstdint>

namespace hopsim {

// The fraction done in millionths (an integer: one lock-free store, no torn double).
using ProgressCounter = std::atomic<int64_t>;
static_assert(ProgressCounter::is_always_lock_free, "shared across fork, must not need a lock");
constexpr double kProgressScale = 1e6;

// How often a waiting thread wakes to read the counter and run its tick (an interrupt
// is handled within this delay).
constexpr int kProgressPollMs = 50;

}  // namespace hopsim
