// The per-node NIC stage: what happens to a message between the rank that sends it and
// whatever transport moves its bytes, and between the transport and the receiving rank.
// Pure arithmetic on dates (seconds), no SimGrid: any transport can put it in front of
// itself. Egress (per sending node): message queue, noise, token bucket; the transport
// then starts at the returned date. Ingress (per receiving node): token bucket, message
// queue; the message is delivered at the returned date. Pacing (a connection's own rate)
// stretches each message apart from the others. docs/model.md derives each.
#pragma once

#include "rng.hpp"
#include "spec.hpp"

#include <cstdint>
#include <deque>
#include <vector>

namespace hopsim {

// A token bucket of sustained rate r and depth b in front of a line of rate R, serving
// messages in FIFO order: bytes leave at R while tokens last, then at r.
class TokenBucket {
public:
  TokenBucket() = default;
  TokenBucket(double line_bytes_per_s, double rate_bytes_per_s, double depth_bytes);
  // A message of `bytes` whose bytes are all available from `ready`: the dates its first
  // and last byte leave the bucket.
  void pass(double ready, double bytes, double* first, double* last);
  // The date the last byte of the messages passed so far leaves.
  double busy_until() const { return t_; }

private:
  double line_ = 0, rate_ = 0, depth_ = 0;
  double tokens_ = 0;  // at t_
  double t_ = 0;
};

// A FIFO server with a fixed service time.
class MessageQueue {
public:
  double serve(double t, double service)
  {
    double start = t > busy_ ? t : busy_;
    busy_ = start + service;
    return busy_;
  }

private:
  double busy_ = 0;
};

class NicStage {
public:
  NicStage(const PlatformSpec& platform, int nodes, uint64_t seed);
  // True when any mechanism of the stage is on; when false, messages bypass it.
  bool active() const { return active_; }
  // A message of `bytes` handed to the NIC of `node` at `t`: the date its transport may
  // start, the time over which its bytes leave the NIC (*spread, at least bytes/R) and
  // the rate the transport may move them at (*rate, bytes/s; 0: the links').
  // `connection` names the message's connection (sender and receiver rank); `now` is the
  // simulation's date (no later call asks about an earlier one).
  double egress(int node, double t, int64_t bytes, double* spread, double* rate, uint64_t connection,
                double now);
  // A message whose last byte the transport delivered to `node` at `arrival`, its bytes
  // spread over `spread` seconds: the date it is handed to the rank.
  double ingress(int node, double arrival, int64_t bytes, double spread, uint64_t connection, double now);
  // A rendezvous's request or answer (no bytes of the message) handed to the NIC of
  // `node` at `t`, and one that arrived at `node` at `arrival`: the dates they pass.
  // They wait behind the bytes queued in the node's bucket, at most what the node's other
  // TCP connections keep in its NIC queue, a share each (the rest of their bytes wait in
  // their sockets; a connection's own bytes are ahead of its control messages anyway: Sim
  // delivers a connection's transfers in order), and at least one share while any bytes
  // are queued. That share is network.nic_queue_bytes (measured with one connection each
  // way: hopsim live --sample-nic-queue), or by default Linux's TCP small queues
  // (tcp_small_queue_check, a per-socket limit): two segments of at most 64 KiB, or 1 ms
  // at the connection's rate (sk_pacing_shift 10) if that is more.
  double control_egress(int node, double t, uint64_t connection, double now);
  double control_ingress(int node, double arrival, uint64_t connection, double now);
  static constexpr double kSegmentBytes = 65536;
  static constexpr double kQueuedSegments = 2;
  static constexpr double kPacingShift = 10;

private:
  // A message's bytes in a bucket: the date the last leaves, and its connection.
  struct Held {
    double last;
    uint64_t connection;
  };
  struct Direction {
    TokenBucket bucket;
    MessageQueue queue;
    std::deque<Held> held;  // in bucket order: `last` never decreases
  };
  // A message's bytes entering d's bucket; what left it before `now` is forgotten.
  static void hold(Direction& d, double last, uint64_t connection, double now);
  // How long a control message of `connection` at `t` waits behind d's bucket.
  double control_wait(Direction& d, double t, uint64_t connection, double now);
  double noise();
  // The sender's message queue and noise: the date a message (or a control message) is
  // through them.
  double queued(Direction& d, double t);
  double normal(Rng& rng);

  bool active_ = false;
  bool bucket_on_ = false;
  double bucket_message_ = 0;  // bytes each message costs the bucket beyond its payload
  double line_ = 0;
  double message_s_ = 0;
  double pace_ = 0;  // bytes per second; 0: no pacing
  double control_wait_s_ = 0;  // that bound, in seconds at the bucket's rate
  int64_t pace_above_ = 0;
  NoiseScope noise_scope_ = NoiseScope::Off;
  NoiseDistribution distribution_ = NoiseDistribution::Lognormal;
  bool lognormal_on_ = false;
  double log_median_ = 0, sigma_ = 0;
  std::vector<double> values_s_;
  double run_noise_ = 0;
  double jitter_ = 0;
  Rng rng_;
  Rng jitter_rng_;
  std::vector<Direction> out_, in_;
};

}  // namespace hopsim
