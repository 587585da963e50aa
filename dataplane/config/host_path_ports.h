// The TCP and UDP ports of the node's host addresses that pods may reach
// through the host path (config key host-path-allowed-ports; the filter
// itself is described in dataplane/datapath/host_path.h). Given as a list
// of "PORT/tcp" and "PORT/udp" ("10250/tcp,53/udp" on the command line, a
// JSON array or that text in a file), or "all" for no filter. The default,
// empty, lets pods reach the host with ICMP and with replies to the node's
// own connections only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

struct HostPathPorts {
  bool all = false;             // "all": every protocol and port, no filter
  std::vector<uint16_t> tcp;    // listed TCP ports, ascending, below 32768
  std::vector<uint16_t> udp;    // listed UDP ports, likewise

  // As the key is given: "all", or the list, TCP first (empty: none).
  std::string toString() const {
    if (all) return "all";
    std::string s;
    for (uint16_t p : tcp) s += (s.empty() ? "" : ",") + std::to_string(p) + "/tcp";
    for (uint16_t p : udp) s += (s.empty() ? "" : ",") + std::to_string(p) + "/udp";
    return s;
  }
  bool operator==(const HostPathPorts&) const = default;
};

}  // namespace sluice
