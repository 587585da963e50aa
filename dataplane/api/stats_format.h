// Human-readable renderings of the API's replies for sluicectl (the JSON form
// is the messages' own protobuf JSON). Pure functions: tested without a server.
#pragma once

#include <string>

#include "sluice/v1/dataplane.pb.h"

namespace sluice {

std::string formatStats(const v1::GetStatsResponse& stats);
std::string formatPorts(const v1::ListPortsResponse& ports);
// Each PMD's NUMA socket, its load since the counters were cleared and the
// pod ports whose rx queues it polls, each with its NUMA socket (when
// known), the packets of the queues this PMD polls (per queue for a
// multi-queue port), their share of the PMD's received packets and whether
// the port was pinned there or placed by sluiced.
std::string formatPmds(const v1::GetStatsResponse& stats, const v1::ListPortsResponse& ports);
std::string formatPort(const v1::Port& port);
std::string formatFlows(const v1::ListFlowsResponse& flows);
std::string formatHealth(const v1::HealthResponse& health);

}  // namespace sluice
