// hopsim._engine: thin bindings. Dicts of spec.hpp's field names in, the engine's
// JSON result out as a dict. Validation and defaults live in hopsim.api/platforms.
#include "engine.hpp"
#include "placement.hpp"
#include "python_tick.hpp"
#include "spec.hpp"
#include "statistics.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <stdexcept>

namespace py = pybind11;

void bind_overlay(py::module_& m);
void bind_collectives(py::module_& m);

namespace {

using hopsim::PlatformSpec;
using hopsim::WorkloadSpec;

template <class T> void take(const py::dict& d, const char* key, T& field)
{
  if (d.contains(key))
    field = d[key].cast<T>();
}

void reject_unknown(const py::dict& d, std::initializer_list<const char*> known, const char* what)
{
  for (auto item : d) {
    auto k = item.first.cast<std::string>();
    bool ok = false;
    for (const char* name : known)
      ok = ok || k == name;
    if (not ok)
      throw std::invalid_argument(std::string("unknown ") + what + " key '" + k + "'");
  }
}

// Which bytes a limiter or the backbone serves: "all" when absent.
hopsim::LimiterScope scope_of(const py::dict& d, const char* key)
{
  std::string scope = "all";
  take(d, key, scope);
  if (scope == "all")
    return hopsim::LimiterScope::All;
  if (scope == "rendezvous")
    return hopsim::LimiterScope::Rendezvous;
  throw std::invalid_argument(std::string(key) + " must be all or rendezvous, not '" + scope + "'");
}

PlatformSpec platform_from(const py::dict& d)
{
  reject_unknown(d,
                 {"name", "nodes", "cores", "latency_us", "bandwidth_gbps", "backbone_gbps", "limiter_gbps", "limiter_scope", "backbone_scope", "topology",
                  "topology_parameters", "intra_latency_us", "intra_bandwidth_gbps", "send_overhead_us",
                  "recv_overhead_us", "per_byte_overhead_ns", "gap_us", "pass_us", "reception", "bucket_gbps",
                  "bucket_burst_bytes", "bucket_message_bytes", "nic_message_us", "pacing_gbps", "pacing_above_bytes", "oversubscribe", "eager_threshold_bytes", "rendezvous_first_bytes", "probe", "transport",
                  "noise_scope", "noise_distribution", "noise_median_us", "noise_sigma", "noise_values_us",
                  "reduce_ns_per_byte", "rate_jitter", "nic_queue_bytes", "machine_cores", "turn_us"},
                 "platform");
  PlatformSpec p;
  take(d, "name", p.name);
  take(d, "nodes", p.nodes);
  take(d, "cores", p.cores);
  take(d, "latency_us", p.latency_us);
  take(d, "bandwidth_gbps", p.bandwidth_gbps);
  take(d, "backbone_gbps", p.backbone_gbps);
  take(d, "limiter_gbps", p.limiter_gbps);
  p.limiter_scope = scope_of(d, "limiter_scope");
  p.backbone_scope = scope_of(d, "backbone_scope");
  take(d, "topology", p.topology);
  take(d, "topology_parameters", p.topology_parameters);
  take(d, "intra_latency_us", p.intra_latency_us);
  take(d, "intra_bandwidth_gbps", p.intra_bandwidth_gbps);
  take(d, "send_overhead_us", p.send_overhead_us);
  take(d, "recv_overhead_us", p.recv_overhead_us);
  take(d, "per_byte_overhead_ns", p.per_byte_overhead_ns);
  take(d, "gap_us", p.gap_us);
  take(d, "pass_us", p.pass_us);
  take(d, "reduce_ns_per_byte", p.reduce_ns_per_byte);
  std::string reception = "any-source";
  take(d, "reception", reception);
  if (reception == "any-source")
    p.reception = hopsim::Reception::AnySource;
  else if (reception == "round-robin")
    p.reception = hopsim::Reception::RoundRobin;
  else
    throw std::invalid_argument("reception must be any-source or round-robin, not '" + reception + "'");
  take(d, "bucket_gbps", p.bucket_gbps);
  take(d, "bucket_burst_bytes", p.bucket_burst_bytes);
  take(d, "bucket_message_bytes", p.bucket_message_bytes);
  take(d, "nic_message_us", p.nic_message_us);
  take(d, "pacing_gbps", p.pacing_gbps);
  take(d, "pacing_above_bytes", p.pacing_above_bytes);
  take(d, "oversubscribe", p.oversubscribe);
  take(d, "machine_cores", p.machine_cores);
  take(d, "turn_us", p.turn_us);
  take(d, "eager_threshold_bytes", p.eager_threshold_bytes);
  take(d, "rendezvous_first_bytes", p.rendezvous_first_bytes);
  std::string transport = "flow";
  take(d, "transport", transport);
  if (transport == "flow")
    p.transport = hopsim::TransportKind::Flow;
  else if (transport == "queue")
    p.transport = hopsim::TransportKind::Queue;
  else
    throw std::invalid_argument("transport must be flow or queue, not '" + transport + "'");
  std::string probe = "arrival";
  take(d, "probe", probe);
  if (probe == "arrival")
    p.probe = hopsim::Probe::Arrival;
  else if (probe == "header")
    p.probe = hopsim::Probe::Header;
  else if (probe == "post")
    p.probe = hopsim::Probe::Post;
  else
    throw std::invalid_argument("probe must be arrival, header or post, not '" + probe + "'");
  std::string scope = "off";
  take(d, "noise_scope", scope);
  if (scope == "off")
    p.noise_scope = hopsim::NoiseScope::Off;
  else if (scope == "message")
    p.noise_scope = hopsim::NoiseScope::Message;
  else if (scope == "run")
    p.noise_scope = hopsim::NoiseScope::Run;
  else
    throw std::invalid_argument("noise scope must be off, message or run, not '" + scope + "'");
  std::string distribution = "lognormal";
  take(d, "noise_distribution", distribution);
  if (distribution == "lognormal")
    p.noise_distribution = hopsim::NoiseDistribution::Lognormal;
  else if (distribution == "empirical")
    p.noise_distribution = hopsim::NoiseDistribution::Empirical;
  else
    throw std::invalid_argument("noise distribution must be lognormal or empirical, not '" + distribution + "'");
  take(d, "noise_median_us", p.noise_median_us);
  take(d, "noise_sigma", p.noise_sigma);
  take(d, "rate_jitter", p.rate_jitter);
  take(d, "nic_queue_bytes", p.nic_queue_bytes);
  take(d, "noise_values_us", p.noise_values_us);
  return p;
}

WorkloadSpec workload_from(const py::dict& d)
{
  reject_unknown(d,
                 {"kind", "ranks", "ranks_per_node", "placement", "node_map", "seed", "sizes", "iterations",
                  "warmup", "repetitions", "request_bytes", "reply_bytes", "exchanges", "destinations", "overlay", "degree",
                  "overlay_arcs", "window", "algorithm", "trace"},
                 "workload");
  WorkloadSpec w;
  std::string kind = "roundtrip";
  take(d, "kind", kind);
  if (kind == "pingpong")
    w.kind = hopsim::WorkloadKind::PingPong;
  else if (kind == "roundtrip")
    w.kind = hopsim::WorkloadKind::RoundTrip;
  else if (kind == "exchange")
    w.kind = hopsim::WorkloadKind::Exchange;
  else if (kind == "bandwidth")
    w.kind = hopsim::WorkloadKind::Bandwidth;
  else if (kind == "pingping")
    w.kind = hopsim::WorkloadKind::PingPing;
  else if (kind == "sendrecv")
    w.kind = hopsim::WorkloadKind::SendRecv;
  else if (kind == "alltoall")
    w.kind = hopsim::WorkloadKind::Alltoall;
  else if (kind == "allreduce")
    w.kind = hopsim::WorkloadKind::Allreduce;
  else if (kind == "allgather")
    w.kind = hopsim::WorkloadKind::Allgather;
  else if (kind == "bcast")
    w.kind = hopsim::WorkloadKind::Bcast;
  else if (kind == "reduce")
    w.kind = hopsim::WorkloadKind::Reduce;
  else if (kind == "barrier")
    w.kind = hopsim::WorkloadKind::Barrier;
  else
    throw std::invalid_argument("unknown workload '" + kind + "'");
  take(d, "ranks", w.ranks);
  take(d, "ranks_per_node", w.ranks_per_node);
  std::string placement = "block";
  take(d, "placement", placement);
  if (placement == "block")
    w.placement = hopsim::Placement::Block;
  else if (placement == "cyclic")
    w.placement = hopsim::Placement::Cyclic;
  else if (placement == "map")
    w.placement = hopsim::Placement::Map;
  else
    throw std::invalid_argument("placement must be block, cyclic or map, not '" + placement + "'");
  take(d, "node_map", w.node_map);
  take(d, "seed", w.seed);
  take(d, "sizes", w.sizes);
  take(d, "iterations", w.iterations);
  take(d, "warmup", w.warmup);
  take(d, "repetitions", w.repetitions);
  take(d, "request_bytes", w.request_bytes);
  take(d, "reply_bytes", w.reply_bytes);
  take(d, "exchanges", w.exchanges);
  std::string destinations = "independent";
  take(d, "destinations", destinations);
  if (destinations == "independent")
    w.destinations = hopsim::Destinations::Independent;
  else if (destinations == "shared")
    w.destinations = hopsim::Destinations::Shared;
  else
    throw std::invalid_argument("destinations must be independent or shared, not '" + destinations + "'");
  take(d, "overlay", w.overlay);
  take(d, "degree", w.degree);
  take(d, "overlay_arcs", w.overlay_arcs);
  take(d, "window", w.window);
  take(d, "algorithm", w.algorithm);
  take(d, "trace", w.trace);
  return w;
}

py::object simulate(const py::dict& platform, const py::dict& workload, const py::object& progress)
{
  PlatformSpec p = platform_from(platform);
  WorkloadSpec w = workload_from(workload);
  std::string json;
  try {
    // The GIL is released while the child runs; the tick takes it back briefly at each
    // wake-up (python_tick.hpp): Ctrl-C stops the run at once, not after it.
    py::gil_scoped_release release;
    json = hopsim::simulate(p, w, hopsim::PythonTick(progress));
  } catch (const hopsim::PythonRaised&) {
    throw py::error_already_set();  // raised again here, once the child is gone
  }
  if (not progress.is_none())
    progress(1.0);
  return py::module_::import("json").attr("loads")(json);
}

// Each outcome: the result dict, ("invalid", message), ("failed", message), or None (not
// run: an earlier run failed). Python raises in the runs' order.
py::list simulate_batch(const py::list& runs, int jobs, const py::object& progress)
{
  std::vector<hopsim::RunRequest> requests;
  for (const auto& run : runs) {
    auto pair = run.cast<py::tuple>();
    requests.push_back({platform_from(pair[0].cast<py::dict>()), workload_from(pair[1].cast<py::dict>())});
  }
  std::vector<hopsim::RunOutcome> outcomes;
  try {
    py::gil_scoped_release release;
    outcomes = hopsim::simulate_batch(requests, jobs, hopsim::PythonTick(progress));
  } catch (const hopsim::PythonRaised&) {
    throw py::error_already_set();  // raised again here, once every child is gone
  }
  if (not progress.is_none())
    progress(1.0);
  py::object loads = py::module_::import("json").attr("loads");
  py::list out;
  for (const auto& o : outcomes) {
    if (o.tag == 'R')
      out.append(loads(o.text));
    else if (o.tag == 'N')
      out.append(py::none());
    else
      out.append(py::make_tuple(o.tag == 'V' ? "invalid" : "failed", o.text));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_engine, m)
{
  m.doc() = "hopsim's SimGrid engine";
  m.def("simulate", &simulate, py::arg("platform"), py::arg("workload"), py::arg("progress") = py::none(),
        "Run one simulation in a child process; returns the result dict. Raises ValueError on bad specs. "
        "progress(fraction), if given, is called with the fraction done (0 to 1) at most every 0.2 s, and with 1 at the end.");
  m.def("simulate_batch", &simulate_batch, py::arg("runs"), py::arg("jobs"), py::arg("progress") = py::none(),
        "Run [(platform, workload), ...] in child processes, up to jobs at once, all forked from the calling "
        "thread; returns one outcome per run, in order: the result dict, ('invalid', message), ('failed', "
        "message), or None (not run: an earlier run failed). progress(fraction) as for simulate().");
  m.def("place_ranks", [](const py::dict& workload) { return hopsim::place_ranks(workload_from(workload)); },
        py::arg("workload"),
        "The node of every rank, as the engine places them (simulate checks it against the platform).");
  // The tools' statistics on lists of whole-microsecond round trips: the live results'
  // figures (calibration/live_result.py) and the checks' (tests/test_model_statistics.py).
  auto stats = m.def_submodule("statistics", "latency_checker's and Ray's round-trip statistics");
  stats.def("latency_checker_rank", [](const std::vector<int64_t>& v) {
    auto r = hopsim::latency_checker_rank(v);
    return py::make_tuple(r.mode, r.average);
  }, "(mode, average) of one rank's round trips");
  stats.def("latency_checker_average_of_averages", &hopsim::latency_checker_average_of_averages);
  stats.def("ray_mode_latency", &hopsim::ray_mode_latency);
  stats.def("ray_average_latency", &hopsim::ray_average_latency);
  stats.def("ray_average_for_all_ranks", [](const std::vector<int64_t>& v) {
    auto r = hopsim::ray_average_for_all_ranks(v);
    return py::make_tuple(r.average, r.standard_deviation);
  }, "(AverageForAllRanks, StandardDeviation) over the ranks' integer averages");
  stats.attr("RAY_NOT_AVAILABLE") = hopsim::kRayNotAvailable;
  stats.def("mean_sd", [](const std::vector<double>& v) {
    auto [mean, sd] = hopsim::mean_sd(v);
    return py::make_tuple(mean, sd);
  }, "(mean, population standard deviation); NaN for no values");
  stats.def("percentile", [](std::vector<double> v, double p) {
    if (v.empty() || !(p > 0 && p <= 100))
      throw std::invalid_argument("percentile: values must not be empty and p in (0, 100]");
    std::sort(v.begin(), v.end());
    return hopsim::percentile(v, p);
  }, py::arg("values"), py::arg("p"), "nearest-rank percentile (the values are sorted first)");
  bind_overlay(m);
  bind_collectives(m);
}
