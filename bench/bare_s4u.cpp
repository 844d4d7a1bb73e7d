// The speed yardstick (simgrid-notes.md): a bare S4U any-to-any request/reply program,
// one actor per rank, on exactly hopsim's platform. It is what a SimGrid user would
// write by hand for this traffic, so hopsim's cost over it is the price of its model.
//
//   bare_s4u RANKS ROUND_TRIPS BYTES LATENCY_US BANDWIDTH_GBPS [REPLY_BYTES] [SEED] [RANKS_PER_NODE]
//
// Each rank sends a request of BYTES to a rank drawn uniformly over all ranks (itself
// included), waits for the reply (REPLY_BYTES, default BYTES) while answering the
// requests of others, ROUND_TRIPS times. Ranks are placed block-wise, RANKS_PER_NODE
// (default 1) per node, as hopsim places them: the ranks of a node share its NIC and
// talk to each other over its intra-node link. Prints one line of JSON.
#include "platform_builder.hpp"
#include "rng.hpp"
#include "spec.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Payload {
  int from;
  bool reply;
};

struct Config {
  int ranks = 0;
  long round_trips = 0;
  uint64_t request_bytes = 0;
  uint64_t reply_bytes = 0;
  uint64_t seed = 1;
  int per_node = 1;
};

Config config;
std::vector<sg4::Mailbox*> mailboxes;
long messages = 0;

// Ranks that finished their own round trips. They keep answering requests as daemons;
// the last one to finish returns, and SimGrid then ends the daemons with the simulation.
int daemons = 0;

void rank_main(int rank)
{
  sg4::Mailbox* mine = mailboxes[rank];
  // A permanent receiver starts each transfer when it is sent, as an eager MPI send
  // does (and as hopsim does), not when the receiver posts its next receive.
  mine->set_receiver(sg4::Actor::self());
  // hopsim's per-rank destination streams: both programs draw the same destinations,
  // so their simulated times can be compared.
  hopsim::Rng destinations(hopsim::stream_seed(config.seed, static_cast<uint64_t>(rank) + 1));
  long done = 0;

  auto send = [](int to, Payload* p, uint64_t bytes) {
    messages++;
    return mailboxes[to]->put_async(p, bytes);
  };
  auto request = [&]() {
    auto dst = static_cast<int>(destinations.below(static_cast<uint64_t>(config.ranks)));
    return send(dst, new Payload{rank, false}, config.request_bytes);
  };

  Payload* got = nullptr;
  // pending[0] is the receive in progress, the others are sends not yet seen complete.
  // A send leaves as soon as wait_any reports it, so the vector stays a handful long and
  // nothing is detached (3.32 finds detached comms by linear search).
  std::vector<sg4::CommPtr> pending{mine->get_async<Payload>(&got), request()};
  for (;;) {
    ssize_t i = sg4::Comm::wait_any(pending);
    if (i > 0) {
      pending[i] = std::move(pending.back());
      pending.pop_back();
      continue;
    }
    Payload message = *got;
    delete got;
    pending[0] = mine->get_async<Payload>(&got);
    if (not message.reply)
      pending.push_back(send(message.from, new Payload{rank, true}, config.reply_bytes));
    else if (++done < config.round_trips)
      pending.push_back(request());
    else if (++daemons < config.ranks)
      sg4::Actor::self()->daemonize();
    else
      break;
  }
  // Everybody is done: every request was answered and every reply received, so no
  // message is on its way and the sends left in `pending` have all completed.
  pending[0]->cancel();
  pending.erase(pending.begin());
  sg4::Comm::wait_all(pending);
}

long parse_long(const char* text, const char* what)
{
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0) {
    std::fprintf(stderr, "bare_s4u: %s must be a non-negative integer, got '%s'\n", what, text);
    std::exit(2);
  }
  return v;
}

double parse_double(const char* text, const char* what)
{
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (*end != '\0' || not(v >= 0)) {
    std::fprintf(stderr, "bare_s4u: %s must be a non-negative number, got '%s'\n", what, text);
    std::exit(2);
  }
  return v;
}

// The high-water mark of this program's memory. Not getrusage's ru_maxrss: Linux carries
// that across exec, so it would report the launching process (a Python benchmark) when
// that one was bigger.
long peak_rss_kib()
{
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr)
    return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1)
      break;
  std::fclose(f);
  return kib;
}

}  // namespace

int main(int argc, char* argv[])
{
  auto start = std::chrono::steady_clock::now();
  if (argc < 6 || argc > 9) {
    std::fprintf(stderr,
                 "usage: %s RANKS ROUND_TRIPS BYTES LATENCY_US BANDWIDTH_GBPS [REPLY_BYTES] [SEED] [RANKS_PER_NODE]\n",
                 argv[0]);
    return 2;
  }
  config.ranks = static_cast<int>(parse_long(argv[1], "RANKS"));
  config.round_trips = parse_long(argv[2], "ROUND_TRIPS");
  config.request_bytes = static_cast<uint64_t>(parse_long(argv[3], "BYTES"));
  config.reply_bytes = argc > 6 ? static_cast<uint64_t>(parse_long(argv[6], "REPLY_BYTES")) : config.request_bytes;
  config.seed = argc > 7 ? static_cast<uint64_t>(parse_long(argv[7], "SEED")) : 1;
  config.per_node = argc > 8 ? static_cast<int>(parse_long(argv[8], "RANKS_PER_NODE")) : 1;
  if (config.per_node < 1 || config.ranks % config.per_node != 0) {
    std::fprintf(stderr, "bare_s4u: RANKS_PER_NODE must be positive and divide RANKS\n");
    return 2;
  }
  hopsim::PlatformSpec spec;
  spec.name = "bare";
  spec.nodes = std::max(1, config.ranks / config.per_node);
  spec.cores = config.per_node;
  spec.latency_us = parse_double(argv[4], "LATENCY_US");
  spec.bandwidth_gbps = parse_double(argv[5], "BANDWIDTH_GBPS");
  if (config.ranks < 1 || config.round_trips < 1 || not(spec.bandwidth_gbps > 0)) {
    std::fprintf(stderr, "bare_s4u: RANKS, ROUND_TRIPS and BANDWIDTH_GBPS must be positive\n");
    return 2;
  }
  spec.intra_latency_us = spec.latency_us;  // as hopsim.platforms does when unset
  spec.intra_bandwidth_gbps = spec.bandwidth_gbps;

  xbt_log_control_set("root.thresh:critical");
  double simulated = 0;
  {
    // The engine's teardown (actors, stacks, platform) is part of the run's cost, as it
    // is in hopsim's timing: the engine is destroyed before the clock stops.
    sg4::Engine e(&argc, argv);
    hopsim::configure_network_model(config.ranks);
    std::vector<sg4::Host*> hosts = hopsim::build_platform(spec);
    mailboxes.resize(config.ranks);
    for (int r = 0; r < config.ranks; r++)
      mailboxes[r] = sg4::Mailbox::by_name("rank-" + std::to_string(r));
    for (int r = 0; r < config.ranks; r++)
      sg4::Actor::create("rank-" + std::to_string(r), hosts[r / config.per_node], rank_main, r);
    e.run();
    simulated = sg4::Engine::get_clock();
  }

  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"ranks\": %d, \"messages\": %ld, \"simulated_seconds\": %.9g, \"wall_seconds\": %.6f, "
              "\"messages_per_second\": %.1f, \"peak_rss_kib\": %ld}\n",
              config.ranks, messages, simulated, wall, static_cast<double>(messages) / wall, peak_rss_kib());
  return 0;
}
