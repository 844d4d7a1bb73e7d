#include "nic.hpp"

#include <algorithm>
#include <cmath>

namespace hopsim {

namespace {
constexpr double kBitsPerByte = 8;
double bytes_per_second(double gbps) { return gbps * 1e9 / kBitsPerByte; }
// The noise stream is apart from the destination streams (rng.hpp's stream numbers are ranks).
constexpr uint64_t kNoiseStream = 0xA0153ULL << 32;
constexpr uint64_t kJitterStream = 0x717E4ULL << 32;
constexpr double kTwoPi = 6.283185307179586;
}  // namespace

TokenBucket::TokenBucket(double line_bytes_per_s, double rate_bytes_per_s, double depth_bytes)
    : line_(line_bytes_per_s), rate_(rate_bytes_per_s), depth_(depth_bytes), tokens_(depth_bytes)
{
}

void TokenBucket::pass(double ready, double bytes, double* first, double* last)
{
  double start = std::max(ready, t_);
  tokens_ = std::min(depth_, tokens_ + rate_ * (start - t_));
  double duration;
  if (rate_ >= line_) {
    duration = bytes / line_;  // the bucket never limits a line slower than its rate
  } else {
    // At R the bucket drains at R - r: it empties after tokens/(R - r) seconds, having
    // let R*tokens/(R - r) bytes through; the rest leaves at r.
    double at_line = line_ * tokens_ / (line_ - rate_);
    if (bytes <= at_line) {
      duration = bytes / line_;
      tokens_ -= bytes * (1 - rate_ / line_);
    } else {
      duration = tokens_ / (line_ - rate_) + (bytes - at_line) / rate_;
      tokens_ = 0;
    }
  }
  *first = start;
  *last = start + duration;
  t_ = *last;
}

NicStage::NicStage(const PlatformSpec& p, int nodes, uint64_t seed)
    : line_(bytes_per_second(p.bandwidth_gbps)), message_s_(p.nic_message_us * 1e-6), noise_scope_(p.noise_scope),
      distribution_(p.noise_distribution), jitter_(p.rate_jitter), rng_(stream_seed(seed, kNoiseStream)),
      jitter_rng_(stream_seed(seed, kJitterStream))
{
  bucket_on_ = p.bucket_gbps > 0;
  bucket_message_ = p.bucket_message_bytes;
  pace_ = bytes_per_second(p.pacing_gbps);
  pace_above_ = p.pacing_above_bytes;
  active_ = bucket_on_ || pace_ > 0 || message_s_ > 0 || noise_scope_ != NoiseScope::Off || jitter_ > 0;
  if (not active_)
    return;
  double rate = bytes_per_second(p.bucket_gbps);
  TokenBucket bucket(line_, rate, p.bucket_burst_bytes);
  if (bucket_on_) {
    double limit = p.nic_queue_bytes > 0 ? static_cast<double>(p.nic_queue_bytes)
                                         : std::max(kQueuedSegments * kSegmentBytes, rate / std::exp2(kPacingShift));
    control_wait_s_ = limit / rate;
  }
  out_.assign(nodes, Direction{bucket, {}});
  in_.assign(nodes, Direction{bucket, {}});
  lognormal_on_ = p.noise_median_us > 0;
  log_median_ = lognormal_on_ ? std::log(p.noise_median_us * 1e-6) : 0;
  sigma_ = p.noise_sigma;
  for (double v : p.noise_values_us)
    values_s_.push_back(v * 1e-6);
  if (noise_scope_ == NoiseScope::Run)
    run_noise_ = noise();
}

// One draw of the added delay, in seconds.
double NicStage::noise()
{
  if (distribution_ == NoiseDistribution::Empirical)
    return values_s_[rng_.below(values_s_.size())];
  if (not lognormal_on_)
    return 0;
  return std::exp(log_median_ + sigma_ * normal(rng_));
}

// Box-Muller from two uniform draws in (0, 1]: one standard normal per call.
double NicStage::normal(Rng& rng)
{
  double u1 = (static_cast<double>(rng.next() >> 11) + 1.0) * 0x1.0p-53;
  double u2 = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double NicStage::queued(Direction& d, double t)
{
  if (message_s_ > 0)
    t = d.queue.serve(t, message_s_);
  if (noise_scope_ == NoiseScope::Message)
    t += noise();
  else if (noise_scope_ == NoiseScope::Run)
    t += run_noise_;
  return t;
}

double NicStage::egress(int node, double t, int64_t bytes, double* spread, double* rate, uint64_t connection,
                        double now)
{
  Direction& d = out_[node];
  auto b = static_cast<double>(bytes);
  t = queued(d, t);
  double first = t, last = t + b / line_;
  if (bucket_on_) {
    // A message's headers pass the bucket before (and beside) its payload.
    d.bucket.pass(t, b + bucket_message_, &first, &last);
    hold(d, last, connection, now);
  }
  *rate = 0;
  if (pace_ > 0 && bytes > pace_above_ && first + b / pace_ > last) {
    // Pacing binds: the connection's bytes trickle out from the start at its own rate,
    // so that paced messages of other connections overlap on the link instead of
    // queueing behind it (the bucket's FIFO date stays as it was).
    *spread = b / pace_;
    *rate = pace_;
    return first;
  }
  *spread = last - first;
  // The transport moves the bytes at line rate: started so that its last byte leaves
  // when the bucket lets it go.
  return last - b / line_;
}

void NicStage::hold(Direction& d, double last, uint64_t connection, double now)
{
  while (not d.held.empty() && d.held.front().last < now)
    d.held.pop_front();
  d.held.push_back({last, connection});
}

double NicStage::control_wait(Direction& d, double t, uint64_t connection, double now)
{
  double backlog = d.bucket.busy_until() - t;
  if (backlog <= 0)
    return 0;
  while (not d.held.empty() && d.held.front().last < now)
    d.held.pop_front();
  // The other connections with bytes still in the bucket at t, newest first; counting
  // stops once their shares cover the backlog.
  std::vector<uint64_t> others;
  for (auto it = d.held.rbegin(); it != d.held.rend() && it->last > t; ++it) {
    if (it->connection == connection || std::find(others.begin(), others.end(), it->connection) != others.end())
      continue;
    others.push_back(it->connection);
    if (static_cast<double>(others.size()) * control_wait_s_ >= backlog)
      return backlog;
  }
  double shares = std::max<double>(1, static_cast<double>(others.size()));
  return std::min(backlog, shares * control_wait_s_);
}

double NicStage::control_egress(int node, double t, uint64_t connection, double now)
{
  Direction& d = out_[node];
  t = queued(d, t);
  if (bucket_on_)
    t += control_wait(d, t, connection, now);
  return t;
}

double NicStage::control_ingress(int node, double arrival, uint64_t connection, double now)
{
  Direction& d = in_[node];
  double t = arrival;
  if (bucket_on_)
    t += control_wait(d, t, connection, now);
  if (message_s_ > 0)
    t = d.queue.serve(t, message_s_);
  return t;
}

double NicStage::ingress(int node, double arrival, int64_t bytes, double spread, uint64_t connection, double now)
{
  Direction& d = in_[node];
  double t = arrival;
  if (bucket_on_) {
    // The bytes came in over `spread`: a bucket that the sender's bucket already paced
    // adds nothing, while several senders converging on this node drain it.
    double first, last;
    d.bucket.pass(arrival - spread, static_cast<double>(bytes) + bucket_message_, &first, &last);
    hold(d, last, connection, now);
    t = std::max(arrival, last);
  }
  if (jitter_ > 0 && spread > 0)
    t += spread * jitter_ * std::abs(normal(jitter_rng_));
  if (message_s_ > 0)
    t = d.queue.serve(t, message_s_);
  return t;
}

}  // namespace hopsim
