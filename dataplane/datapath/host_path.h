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
// exact address, if the host port filter lets it (below). A tunnelled
// packet never does: remote nodes route only pod CIDRs into the tunnel.
//
// The host port filter (config key host-path-allowed-ports): unless it is
// "all", a pod reaches the host addresses only with ICMP/ICMPv6, and with
// TCP or UDP to a listed destination port or to one from 32768 up. Those
// are where the node kernel's own connections to pods (kubelet's probes,
// say) get their answers: Linux's ip_local_port_range, 32768-60999 by
// default, lies there. So kubelet (10250), NodePorts (30000-32767) and
// sluiced's metrics are closed to pods unless listed. Stateless: the
// decision reads ip_proto, for TCP and UDP the fragment state (a later
// fragment has no ports; it is let through, as the kernel drops it without
// its first fragment, which was checked) and tp_dst, as the widest prefix
// of whole nibbles that decides alike, so a pod scanning ports makes a few
// dozen megaflows and at most four port masks, not one per port.
// What comes in from the TAP is decided like any packet,
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

// The most TCP and the most UDP ports host-path-allowed-ports may list:
// sized into every snapshot, and each is compared once per host-bound miss.
inline constexpr uint32_t kMaxHostPathPorts = 32;
// TCP/UDP destination ports from here up are always open to pods (see above).
inline constexpr uint16_t kHostReplyPortsFrom = 32768;

struct HostPath {
  bool enabled = false;
  uint16_t port_no = kInvalidPort;  // the TAP's port number
  bool has_ipv4 = false;
  uint32_t ipv4_be = 0;  // the node's IPv4 address pods may reach
  bool has_ipv6 = false;
  uint8_t ipv6[16] = {};  // the node's IPv6 address pods may reach
  // false: every protocol and port of the host addresses is reachable
  // (host-path-allowed-ports "all"); true: only what the filter above lets.
  bool filter_ports = false;
  // The listed TCP and UDP destination ports (host order, below
  // kHostReplyPortsFrom): the first tcp_count and udp_count entries.
  uint8_t tcp_count = 0;
  uint8_t udp_count = 0;
  uint16_t tcp_ports[kMaxHostPathPorts] = {};
  uint16_t udp_ports[kMaxHostPathPorts] = {};

  bool isHostIpv4(uint32_t dst_be) const { return enabled && has_ipv4 && dst_be == ipv4_be; }
  bool isHostIpv6(const uint8_t* dst) const { return enabled && has_ipv6 && std::memcmp(dst, ipv6, 16) == 0; }
};

}  // namespace sluice
