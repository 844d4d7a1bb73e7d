// Builds the SimGrid platform of a PlatformSpec. The only file that knows SimGrid's
// platform API (3.32's create_*_zone, create_host, create_link): a move to 4.x's
// add_host/add_link changes this file alone.
#pragma once

#include "spec.hpp"

#include <simgrid/s4u/Host.hpp>
#include <string>
#include <vector>

namespace hopsim {

// SimGrid configuration the platform contract relies on; call before building.
void configure_network_model(int actors);

// One host per node, in node order.
std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec);

// With limiter_scope or backbone_scope rendezvous, each star node has a second host of
// this name: a transfer between two of them crosses both nodes' limiters and the
// backbone, one between the nodes' own hosts only what serves every byte (SimGrid
// routes per host pair).
std::string bulk_host_name(const std::string& node);

}  // namespace hopsim
