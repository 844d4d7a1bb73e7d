// Runs one simulation: platform + workload in, the result as a JSON object out:
// {"simulated_seconds", "messages", "results", "per_rank"(roundtrip only), "peak_rss_kib"}.
#pragma once

#include "spec.hpp"

#include <functional>
#include <string>

namespace hopsim {

// Throws std::invalid_argument (or OverlayError) for specs that make no sense.
void validate(const PlatformSpec& platform, const WorkloadSpec& workload);

// In this process. SimGrid's engine can be set up once per process, so this can run
// once per process; use simulate() anywhere else.
std::string run_simulation(const PlatformSpec& platform, const WorkloadSpec& workload);

// In a forked child, so that it can be called any number of times and every run starts
// from a clean SimGrid; the child's peak memory is reported as "peak_rss_kib".
// Errors from validation come back as std::invalid_argument. The child dies with the
// calling thread (PR_SET_PDEATHSIG) and ignores SIGINT; check_interrupt, called at least
// every 50 ms while the child runs, may throw to abandon the run: the child is killed
// and reaped before the exception leaves.
std::string simulate(const PlatformSpec& platform, const WorkloadSpec& workload,
                     const std::function<void()>& check_interrupt = {});

}  // namespace hopsim
