// The exception path to the node's own kernel: a TAP port whose kernel side
// lives in the node's network namespace (config keys host-interface and
// host-addresses). Pods reach the node's own addresses through it, and the
// node reaches the pods (health checks, debugging): its kernel routes the
// pod CIDRs to the interface, and sluiced, answering its ARP and neighbor
// solicitations with the gateway MAC, is its next hop.
//
// What the decisions read of it (flow_translate.cc): a destination that is
// one of the host addresses goes out the TAP port with the L3 rewrite (the
// port's MAC there is the kernel interface's), its megaflow matching that
// exact address. What comes in from the TAP is decided like any packet,
// after the port's sources are checked as a pod's are (its PortSources:
// the kernel interface's MAC, the host addresses, the link-local address
// its MAC gives).
//
// Filled by the host path module into every snapshot and translation
// (immutable after, as the rest of a snapshot). Disabled: no host path.
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/limits.h"

namespace sluice {

struct HostPath {
  bool enabled = false;
  uint16_t port_no = kInvalidPort;  // the TAP's port number
  bool has_ipv4 = false;
  uint32_t ipv4_be = 0;  // the node's IPv4 address pods may reach
  bool has_ipv6 = false;
  uint8_t ipv6[16] = {};  // the node's IPv6 address pods may reach

  bool isHostIpv4(uint32_t dst_be) const { return enabled && has_ipv4 && dst_be == ipv4_be; }
  bool isHostIpv6(const uint8_t* dst) const { return enabled && has_ipv6 && std::memcmp(dst, ipv6, 16) == 0; }
};

}  // namespace sluice
