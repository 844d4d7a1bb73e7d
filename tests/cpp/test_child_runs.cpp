// simulate_batch (simulator/child_runs.cpp): outcomes in the runs' order whatever the
// number of children at once, the first failing run in that order ends the batch, and
// an abandoned batch leaves no child behind.
#include "engine.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <vector>

using namespace hopsim;

namespace {

PlatformSpec platform()
{
  PlatformSpec p;
  p.nodes = 4;
  p.cores = 2;
  p.latency_us = 10;
  p.bandwidth_gbps = 1;
  return p;
}

RunRequest pingpong(int64_t bytes)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::PingPong;
  w.ranks = 2;
  w.sizes = {bytes};
  w.iterations = 3;
  return {platform(), w};
}

std::vector<std::string> tags_and_texts(const std::vector<RunOutcome>& outcomes)
{
  std::vector<std::string> out;
  for (const auto& o : outcomes)
    out.push_back(std::string(1, o.tag) + o.text);
  return out;
}

}  // namespace

TEST(ChildRuns, OutcomesComeInTheRunsOrderForAnyNumberOfJobs)
{
  std::vector<RunRequest> runs;
  for (int64_t bytes : {1 << 20, 0, 1 << 16, 1000, 1 << 18})
    runs.push_back(pingpong(bytes));
  auto one = simulate_batch(runs, 1);
  ASSERT_EQ(one.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSERT_EQ(one[i].tag, 'R') << one[i].text;
    // Each outcome is its own run's (the peak memory aside, which differs by child).
    std::string alone = simulate(runs[i].platform, runs[i].workload);
    EXPECT_EQ(one[i].text.substr(0, one[i].text.find("peak_rss_kib")), alone.substr(0, alone.find("peak_rss_kib")));
  }
  for (int jobs : {2, 3, 8}) {
    auto many = simulate_batch(runs, jobs);
    for (size_t i = 0; i < runs.size(); ++i)
      EXPECT_EQ(many[i].text.substr(0, many[i].text.find("peak_rss_kib")),
                one[i].text.substr(0, one[i].text.find("peak_rss_kib")));
  }
}

TEST(ChildRuns, TheFirstFailingRunInOrderEndsTheBatch)
{
  std::vector<RunRequest> runs{pingpong(1 << 20), pingpong(0), pingpong(1 << 20), pingpong(0)};
  runs[1].platform.cores = 0;  // refused by validate
  runs[3].platform.cores = 0;
  for (int jobs : {1, 2, 4}) {
    auto out = simulate_batch(runs, jobs);
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0].tag, 'R') << jobs;
    EXPECT_EQ(out[1].tag, 'V') << jobs;
    EXPECT_NE(out[1].text.find("cores must be positive"), std::string::npos) << out[1].text;
    EXPECT_EQ(out[2].tag, 'N') << jobs;  // not run, or killed: after the failure
    EXPECT_EQ(out[3].tag, 'N') << jobs;
  }
}

TEST(ChildRuns, AnAbandonedBatchLeavesNoChild)
{
  std::vector<RunRequest> runs;
  for (int k = 0; k < 4; ++k) {
    RunRequest r = pingpong(1 << 20);
    r.workload.iterations = 2000000;  // long enough to be running when abandoned
    runs.push_back(r);
  }
  int ticks = 0;
  EXPECT_THROW(simulate_batch(runs, 2, [&](double) {
                 if (++ticks == 3)
                   throw std::runtime_error("abandoned");
               }),
               std::runtime_error);
  EXPECT_EQ(ticks, 3);
  // Every child was reaped before the exception left: none is left to wait for.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
}
