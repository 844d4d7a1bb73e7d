#include "engine.hpp"

#include "overlay.hpp"
#include "placement.hpp"
#include "platform_builder.hpp"
#include "rank_loop.hpp"
#include "transport.hpp"
#include "workloads.hpp"
#include "collectives/workload.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <xbt/log.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace sg4 = simgrid::s4u;

namespace hopsim {

namespace {

void require(bool ok, const std::string& message)
{
  if (not ok)
    throw std::invalid_argument(message);
}

const char* collective_kind_name(WorkloadKind k)
{
  switch (k) {
    case WorkloadKind::Alltoall: return "alltoall";
    case WorkloadKind::Allreduce: return "allreduce";
    case WorkloadKind::Allgather: return "allgather";
    case WorkloadKind::Bcast: return "bcast";
    case WorkloadKind::Reduce: return "reduce";
    default: return "barrier";
  }
}

bool positive(double v) { return std::isfinite(v) && v > 0; }
bool non_negative(double v) { return std::isfinite(v) && v >= 0; }

std::unique_ptr<Overlay> build_overlay(const WorkloadSpec& w)
{
  if (w.overlay.empty())
    return nullptr;
  if (w.overlay == "user")
    return make_table_overlay(w.ranks, w.overlay_arcs, w.seed);
  return make_overlay(w.overlay, w.ranks, w.degree, w.seed);
}

// A collective's algorithm exists and fits the ranks; sizes are whole elements.
void validate_collective(const PlatformSpec& p, const WorkloadSpec& w)
{
  // MPI's progress engine takes whatever arrived; round-robin is RayPlatform's own loop.
  require(p.reception == Reception::AnySource,
          "collectives match any source (MPI's progress engine): reception must be any-source");
  coll::Collective c = coll::collective_from(collective_kind_name(w.kind));
  bool reduction = c == coll::Collective::Allreduce || c == coll::Collective::Reduce;
  for (int64_t s : w.sizes)
    require(not reduction || s % 4 == 0,
            "sizes of " + std::string(coll::collective_name(c)) + " must be multiples of 4 bytes (whole MPI_FLOATs), got " +
                std::to_string(s));
  if (not w.algorithm.empty())
    for (int64_t s : w.sizes.empty() ? std::vector<int64_t>{0} : w.sizes)
      coll::make_schedule(c, w.algorithm, w.ranks, s, reduction ? 4 : 1);  // throws if unknown or unfit
}

}  // namespace

void validate(const PlatformSpec& p, const WorkloadSpec& w)
{
  require(p.nodes > 0, "nodes must be positive");
  require(p.cores > 0, "cores must be positive");
  require(non_negative(p.latency_us), "latency_us must be zero or positive");
  require(positive(p.bandwidth_gbps), "bandwidth_gbps must be positive");
  require(non_negative(p.backbone_gbps), "backbone_gbps must be zero (none) or positive");
  require(non_negative(p.limiter_gbps), "limiter_gbps must be zero (none) or positive");
  require(p.limiter_gbps == 0 || p.topology == "star" || p.topology.empty(),
          "limiter_gbps runs on the star topology only");
  require(non_negative(p.intra_latency_us), "intranode latency_us must be zero or positive");
  require(positive(p.intra_bandwidth_gbps), "intranode bandwidth_gbps must be positive");
  for (double v : {p.send_overhead_us, p.recv_overhead_us, p.per_byte_overhead_ns, p.gap_us, p.pass_us})
    require(non_negative(v), "host costs must be zero or positive");
  require(p.machine_cores >= 0, "machine_cores must be zero (each node its own cores) or positive");
  require(non_negative(p.turn_us), "turn_us must be zero or positive");
  require(p.transport == TransportKind::Flow || p.topology == "star" || p.topology.empty(),
          "transport \"queue\" runs on the star topology only (topology is " + p.topology + ")");
  require(w.ranks > 0, "ranks must be positive");
  require(non_negative(p.bucket_gbps), "bucket_gbps must be zero (no token bucket) or positive");
  require(non_negative(p.bucket_burst_bytes), "bucket_burst_bytes must be zero or positive");
  require(p.bucket_gbps > 0 || p.bucket_burst_bytes == 0, "bucket_burst_bytes needs bucket_gbps");
  require(non_negative(p.bucket_message_bytes), "bucket_message_bytes must be zero or positive");
  require(p.bucket_gbps > 0 || p.bucket_message_bytes == 0, "bucket_message_bytes needs bucket_gbps");
  require(non_negative(p.nic_message_us), "nic_message_us must be zero or positive");
  require(non_negative(p.pacing_gbps), "pacing_gbps must be zero (no pacing) or positive");
  require(p.pacing_above_bytes >= 0, "pacing_above_bytes must be zero or positive");
  require(p.pacing_gbps > 0 || p.pacing_above_bytes == 0, "pacing_above_bytes needs pacing_gbps");
  require(p.eager_threshold_bytes >= -1, "eager_threshold_bytes must be zero or positive (-1: always eager)");
  require(p.rendezvous_first_bytes >= 0, "rendezvous_first_bytes must be zero or positive");
  if (p.noise_scope != NoiseScope::Off) {
    if (p.noise_distribution == NoiseDistribution::Lognormal) {
      require(positive(p.noise_median_us), "noise median_us must be positive");
      require(non_negative(p.noise_sigma), "noise sigma must be zero or positive");
    } else {
      require(not p.noise_values_us.empty(), "empirical noise needs at least one value");
      for (double v : p.noise_values_us)
        require(non_negative(v), "noise values_us must be zero or positive");
    }
  }
  check_placement(p, w);
  require(w.iterations >= 0 && w.repetitions >= 0, "iterations and repetitions must be zero (default) or positive");
  require(w.warmup >= -1, "warmup must be -1 (the tool's own) or zero or more");
  switch (w.kind) {
    case WorkloadKind::PingPong:
      require(w.ranks == 2, "pingpong runs on exactly 2 ranks");
      require(not w.sizes.empty(), "pingpong needs at least one size");
      break;
    case WorkloadKind::Exchange:
    case WorkloadKind::SendRecv:
      require(not w.sizes.empty(), "exchange and sendrecv need at least one size");
      break;
    case WorkloadKind::Bandwidth:
      require(w.ranks == 2, "bandwidth runs on exactly 2 ranks");
      require(not w.sizes.empty(), "bandwidth needs at least one size");
      require(w.window > 0, "window must be positive");
      break;
    case WorkloadKind::PingPing:
      require(w.ranks == 2, "pingping runs on exactly 2 ranks");
      require(not w.sizes.empty(), "pingping needs at least one size");
      break;
    case WorkloadKind::Alltoall:
    case WorkloadKind::Allreduce:
    case WorkloadKind::Allgather:
    case WorkloadKind::Bcast:
    case WorkloadKind::Reduce:
    case WorkloadKind::Barrier:
      validate_collective(p, w);
      break;
    case WorkloadKind::RoundTrip:
      require(w.exchanges > 0, "exchanges must be positive");
      require(w.request_bytes >= 0 && w.reply_bytes >= 0, "message sizes must be zero or positive");
      break;
  }
  require(non_negative(p.reduce_ns_per_byte), "reduce_ns_per_byte must be zero or positive");
  for (int64_t s : w.sizes)
    require(s >= 0, "sizes must be zero or positive");
  require(w.overlay.empty() || w.kind == WorkloadKind::RoundTrip, "overlays apply to the roundtrip workload only");
}

namespace {

// Column lists, not one object per row: a traced run writes a row per transfer.
void write_trace(JsonWriter& json, const Sim& sim)
{
  static const char* const kPhase[] = {"data", "request", "answer"};
  json.key("trace").begin_object();
  json.key("columns").begin_array();
  for (const char* c : {"staged_us", "started_us", "arrived_us", "delivered_us", "what", "from", "to", "bytes",
                        "seq"})
    json.value(std::string(c));
  json.end_array();
  json.key("rows").begin_array();
  for (const Sim::TraceRow& t : sim.trace()) {
    json.begin_array();
    json.value(t.staged * 1e6).value(t.started * 1e6).value(t.arrived * 1e6).value(t.delivered * 1e6);
    json.value(std::string(kPhase[t.phase])).value(t.from).value(t.to).value(t.bytes).value(t.seq);
    json.end_array();
  }
  json.end_array();
  json.end_object();
}

}  // namespace

std::string run_simulation(const PlatformSpec& platform, const WorkloadSpec& workload, ProgressCounter* progress)
{
  validate(platform, workload);
  std::unique_ptr<Overlay> overlay = build_overlay(workload);
  bool routed = overlay != nullptr;

  Sim sim(platform, workload, std::move(overlay));
  sim.publish_progress_to(progress);
  std::unique_ptr<Workload> pattern;
  switch (workload.kind) {
    case WorkloadKind::RoundTrip:
      pattern = std::make_unique<RoundTrip>(workload, routed);
      break;
    case WorkloadKind::PingPong:
      pattern = std::make_unique<PingPong>(workload);
      break;
    case WorkloadKind::Exchange:
    case WorkloadKind::SendRecv:
    case WorkloadKind::PingPing:
      pattern = std::make_unique<ImbChain>(workload);
      break;
    case WorkloadKind::Bandwidth:
      pattern = std::make_unique<Bandwidth>(workload);
      break;
    case WorkloadKind::Alltoall:
    case WorkloadKind::Allreduce:
    case WorkloadKind::Allgather:
    case WorkloadKind::Bcast:
    case WorkloadKind::Reduce:
    case WorkloadKind::Barrier:
      pattern = std::make_unique<CollectiveWorkload>(workload, platform);
      break;
  }
  // Nodes 0 .. the highest the placement uses (an explicit map may leave some idle).
  int nodes_used = static_cast<int>(ranks_on_nodes(sim.node_map()).size());
  if (platform.transport == TransportKind::Queue) {
    // No SimGrid at all: the event loop is the whole simulation.
    std::unique_ptr<Transport> transport = make_queue_transport(platform, nodes_used);
    sim.run(*pattern, *transport);
  } else {
    xbt_log_control_set("root.thresh:critical");
    int argc = 1;
    char name[] = "hopsim";
    char* argv[] = {name, nullptr};
    sg4::Engine e(&argc, argv);
    // A port actor per node (two with a rendezvous-only limiter or backbone) and the driver.
    bool second_port = has_bulk_hosts(platform);
    configure_network_model(nodes_used * (second_port ? 2 : 1) + 1);
    std::vector<sg4::Host*> all_nodes = build_platform(platform);
    std::vector<sg4::Host*> used(all_nodes.begin(), all_nodes.begin() + nodes_used);
    std::unique_ptr<Transport> transport = make_flow_transport(used);
    sim.run(*pattern, *transport);
  }
  JsonWriter json;
  json.begin_object();
  json.key("simulated_seconds").value(sim.finish_time());
  json.key("messages").value(sim.transfers());
  json.key("results");
  pattern->write_results(json, sim);
  if (pattern->has_per_rank()) {
    json.key("per_rank");
    pattern->write_per_rank(json);
  }
  if (workload.trace)
    write_trace(json, sim);
  json.end_object();
  return json.str();
}

}  // namespace hopsim
