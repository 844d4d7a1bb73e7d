// The values the engine runs on: a platform, a workload, and what comes back.
// Python validates and fills these (hopsim.platforms, hopsim.api); the bindings copy
// dict keys of the same names into them. Units live in field names.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hopsim {

enum class Reception { AnySource, RoundRobin };
// When a probe first sees a message: once its last byte arrived (default), once its
// header arrived, or as soon as it is posted (SMPI's MPI_Iprobe). A message seen before
// it has fully arrived is received by a blocking receive (docs/model.md).
enum class Probe { Arrival, Header, Post };
// What moves the bytes between ranks (transport.hpp, docs/model.md): SimGrid's flow model
// (max-min fair sharing, the reference) or FIFO queues per link (the star only).
enum class TransportKind { Flow, Queue };
enum class NoiseScope { Off, Message, Run };
// Which bytes a node's limiter serves: every node-to-node transfer's, or only those of
// messages above the eager threshold (a rendezvous's first fragment and the rest; its
// request and answer carry none): large two-way transfers lose rate to TCP's queueing
// behind a token bucket where small eager ones do not (docs/model.md).
enum class LimiterScope { All, Rendezvous };
enum class NoiseDistribution { Lognormal, Empirical };

struct PlatformSpec {
  std::string name = "platform";
  int nodes = 1;
  int cores = 1;
  // Between nodes: one full-duplex NIC link per node into a switch.
  double latency_us = 0;       // one-way node-to-node latency (the two NIC links share it)
  double bandwidth_gbps = 1;   // per direction, per NIC
  double backbone_gbps = 0;    // 0: no backbone (a non-blocking switch)
  // One capacity per node shared by the bytes it sends and receives (SimGrid's cluster
  // limiter_link: a host whose in+out is below twice its NIC's rate); 0: none. Star only.
  double limiter_gbps = 0;
  LimiterScope limiter_scope = LimiterScope::All;
  // Which bytes the backbone serves, likewise: all node-to-node bytes, or a rendezvous's
  // only (a machine that emulates the nodes cuts large transfers into small packets
  // behind a token bucket, and its cores share their cost; docs/model.md).
  LimiterScope backbone_scope = LimiterScope::All;
  std::string topology = "star";  // star, fat-tree, torus, dragonfly
  TransportKind transport = TransportKind::Flow;
  std::string topology_parameters;  // SimGrid's zone parameter string for the last three
  // Between ranks of one node.
  double intra_latency_us = 0;
  double intra_bandwidth_gbps = 1;
  // Host-side costs per rank (LogGP o, O, g) and the polling loop.
  double send_overhead_us = 0;
  double recv_overhead_us = 0;
  double per_byte_overhead_ns = 0;  // added to both send and receive overhead, per byte
  double gap_us = 0;                // minimum time between two message injections of a rank
  double pass_us = 0;               // cost of one pass of the rank's polling loop
  double reduce_ns_per_byte = 0;    // a reduction's arithmetic, per byte combined
  Reception reception = Reception::AnySource;
  // Model mechanisms (docs/model.md), all off at their defaults.
  double bucket_gbps = 0;         // NIC token bucket's sustained rate per direction; 0: none
  double bucket_burst_bytes = 0;  // its depth
  // What a message costs the bucket beyond its payload (its packets' headers, the
  // acknowledgements that share the bucket): tokens and line time, per message.
  double bucket_message_bytes = 0;
  double nic_message_us = 0;      // per-message service time of a node's NIC queue, per direction
  double pacing_gbps = 0;          // a connection's own rate (TCP pacing); 0: none
  int64_t pacing_above_bytes = 0;  // messages up to this size leave unpaced (one packet)
  bool oversubscribe = false;     // more ranks than cores: passes and overheads stretch
  // Every node on one machine of this many cores (an emulated cluster); 0: each node
  // has its own. With n ranks per machine core (n > 1), a pass lasts at least
  // n * turn_us: a yielding rank probes once per turn of its core.
  int machine_cores = 0;
  double turn_us = 0;
  int64_t eager_threshold_bytes = -1;  // above it: rendezvous; -1: always eager
  int64_t rendezvous_first_bytes = 0;  // sent with a rendezvous's request (Open MPI ob1)
  Probe probe = Probe::Arrival;
  NoiseScope noise_scope = NoiseScope::Off;
  NoiseDistribution noise_distribution = NoiseDistribution::Lognormal;
  double noise_median_us = 0;  // lognormal: the median added delay
  double noise_sigma = 0;      // lognormal: the standard deviation of its logarithm
  double rate_jitter = 0;
  int64_t nic_queue_bytes = 0;  // control messages wait behind at most this; 0: Linux's small queues
  std::vector<double> noise_values_us;  // empirical: delays drawn uniformly from these
};

enum class WorkloadKind {
  PingPong, RoundTrip, Exchange, Bandwidth, PingPing, SendRecv,
  // IMB-MPI1's collectives (collectives/workload.hpp)
  Alltoall, Allreduce, Allgather, Bcast, Reduce, Barrier
};
// Which node each rank runs on (placement.hpp, docs/model.md "Placement"): Open MPI's
// default --map-by slot (block: ranks_per_node consecutive ranks per node), --map-by node
// (cyclic, SLURM's cyclic: rank r on node r mod nodes used), or an explicit map (a
// rankfile or a hostfile's order, read by hopsim.placement).
enum class Placement { Block, Cyclic, Map };
enum class Destinations { Independent, Shared };

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::RoundTrip;
  int ranks = 2;
  int ranks_per_node = 1;         // block and cyclic; an explicit map gives its own counts
  Placement placement = Placement::Block;
  std::vector<int> node_map;      // placement == Map: the node of each rank
  uint64_t seed = 1;
  // pingpong, bandwidth and the IMB workloads
  std::vector<int64_t> sizes;
  int64_t iterations = 0;   // pingpong round trips, bandwidth windows per size; 0: the OSU tool's counts
  // pingpong round trips, bandwidth windows untimed before each size's timed ones (OSU's
  // -x); -1: the tool's own with its own counts, none with explicit iterations.
  int64_t warmup = -1;
  int64_t repetitions = 0;  // exchange, pingping, sendrecv repetitions per size; 0: IMB's counts
  // roundtrip
  int64_t request_bytes = 4000;
  int64_t reply_bytes = 4000;
  int64_t exchanges = 1000;  // round trips per rank
  Destinations destinations = Destinations::Independent;
  std::string overlay;       // empty: no routing (every rank talks to every rank)
  int degree = 0;            // overlay degree parameter, 0: RayPlatform's choice
  std::vector<std::pair<int, int>> overlay_arcs;  // overlay == "user": the graph's arcs
  // bandwidth (osu_bw): non-blocking sends per window, then one acknowledgement
  int64_t window = 64;
  // collectives: Open MPI coll/tuned's algorithm name; empty: its fixed decision rules
  std::string algorithm;
  // Not the pattern's: record every transfer of the run (hopsim simulate --trace).
  bool trace = false;
};

// Whether a star node needs a second host (platform_builder.hpp, bulk_host_name): a
// limiter or a backbone that serves rendezvous messages only.
inline bool has_bulk_hosts(const PlatformSpec& spec)
{
  return (spec.limiter_gbps > 0 && spec.limiter_scope == LimiterScope::Rendezvous) ||
         (spec.backbone_gbps > 0 && spec.backbone_scope == LimiterScope::Rendezvous);
}

}  // namespace hopsim
