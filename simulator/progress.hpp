// A run's progress, from the simulating child to the parent that waits for it.
//
// The engine runs each simulation in a forked child (engine.hpp), so the counter lives in
// a page mapped MAP_SHARED before the fork: the child's event loop stores the fraction
// done every few thousand events, the parent reads it each time it wakes (every 50 ms)
// and hands it to the caller's tick; nothing crosses per message.
#pragma once

#include <atomic>
#include <cstdint>

namespace hopsim {

// The fraction done in millionths (an integer: one lock-free store, no torn double).
using ProgressCounter = std::atomic<int64_t>;
static_assert(ProgressCounter::is_always_lock_free, "shared across fork, must not need a lock");
constexpr double kProgressScale = 1e6;

}  // namespace hopsim
