// Runs one simulation: platform + workload in, the result as a JSON object out:
// {"simulated_seconds", "messages", "results", "per_rank"(roundtrip only), "peak_rss_kib"}.
#pragma once

#include "progress.hpp"
#include "spec.hpp"

#include <functional>
#include <string>
#include <vector>

namespace hopsim {

// Throws std::invalid_argument (or OverlayError) for specs that make no sense.
void validate(const PlatformSpec& platform, const WorkloadSpec& workload);

// In this process. SimGrid's engine can be set up once per process, so this can run
// once per process; use simulate() anywhere else. The fraction done is stored into
// `progress` as the run goes, if given.
std::string run_simulation(const PlatformSpec& platform, const WorkloadSpec& workload,
                           ProgressCounter* progress = nullptr);

// In a forked child (child_runs.cpp), so that it can be called any number of times and
// every run starts from a clean SimGrid; the child's peak memory is reported as "peak_rss_kib".
// Errors from validation come back as std::invalid_argument. The child dies with the
// calling thread (PR_SET_PDEATHSIG) and ignores SIGINT; tick, called at least every
// 50 ms while the child runs with the fraction of the run done (0 to 1), may throw to
// abandon the run: the child is killed and reaped before the exception leaves.
std::string simulate(const PlatformSpec& platform, const WorkloadSpec& workload,
                     const std::function<void(double)>& tick = {});

struct RunRequest {
  PlatformSpec platform;
  WorkloadSpec workload;
};

// A run's outcome: tag 'R' (text: the result's JSON), 'V' (invalid input), 'E' (any
// other failure: text says what), 'N' (not run: an earlier run failed).
struct RunOutcome {
  char tag;
  std::string text;
};

// Independent runs, up to `jobs` children at once, all forked from the calling thread.
// Outcomes in the runs' order; after the first run (in that order) that fails, no later
// run is started or kept, so the outcomes are the same for any `jobs`. tick, as for
// simulate(), gets the fraction of the whole batch done and may throw: every child is
// killed and reaped before the exception leaves.
std::vector<RunOutcome> simulate_batch(const std::vector<RunRequest>& runs, int jobs,
                                       const std::function<void(double)>& tick = {});

}  // namespace hopsim
