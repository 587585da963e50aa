// Source validation (anti-spoofing): which sources each pod port may send
// with, and the checks against them. A pod whose port has validation on may
// send only with its port's MAC as Ethernet source, its IPv4 address as IPv4
// source, and as IPv6 source its IPv6 address or the link-local address its
// MAC gives (modified EUI-64, what the pod's kernel configures); its ARP must
// name its own MAC and IPv4 address as sender (or 0.0.0.0: a probe). Ports
// with validation off (a router pod forwarding others' traffic) and ports
// that are no pod's (the overlay uplink) are not checked.
//
// Built whole by the control path with every port change and immutable
// after (shared by a version's PMD snapshots and the translation control
// runs, as the forwarding tables). Read by PMDs in the megaflow translation
// (flow_translate.cc) and in the per-packet ARP and neighbor discovery
// answers, which no cache serves.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/limits.h"

namespace sluice {

// One port's allowed sources (addresses in wire order).
struct PortSources {
  bool checked = false;   // validation on for this port; false: anything goes
  bool has_ipv4 = false;  // false: an IPv6-only pod, whose IPv4 is all spoofed
  bool has_ipv6 = false;  // false: only the link-local address is its own
  uint8_t mac[6] = {};
  uint32_t ipv4_be = 0;
  uint8_t ipv6[16] = {};
  uint8_t link_local[16] = {};  // fe80::/64 with the MAC's modified EUI-64

  bool macOk(const uint8_t* src) const { return std::memcmp(src, mac, 6) == 0; }
  bool ipv4Ok(uint32_t src_be) const { return has_ipv4 && src_be == ipv4_be; }
  bool ipv6Ok(const uint8_t* src) const {
    return (has_ipv6 && std::memcmp(src, ipv6, 16) == 0) || std::memcmp(src, link_local, 16) == 0;
  }
};

// Every port's allowed sources, indexed by port number.
struct SourceTable {
  // Sized like the snapshots' port tables (portTableSize of max-ports).
  std::vector<PortSources> ports = std::vector<PortSources>(kDefaultPortTable);

  // The port's sources when its packets are checked; null when they are not.
  const PortSources* checked(uint16_t in_port) const {
    return in_port < ports.size() && ports[in_port].checked ? &ports[in_port] : nullptr;
  }
};

// ARP from a checked port: Ethernet source and sender hardware address its
// MAC, sender IPv4 its address or 0.0.0.0 (an address probe). Returns false
// with *reason set when spoofed.
inline bool arpSourcesOk(const PortSources& s, const uint8_t* eth_src, const uint8_t* sha, uint32_t spa_be,
                         DropReason* reason) {
  if (!s.macOk(eth_src)) {
    *reason = DropReason::kSpoofedSourceMac;
    return false;
  }
  if (!s.macOk(sha) || (spa_be != 0 && !s.ipv4Ok(spa_be))) {
    *reason = DropReason::kSpoofedArp;
    return false;
  }
  return true;
}

// Neighbor discovery from a checked port: Ethernet source its MAC, IPv6
// source its own (global or link-local) or :: (duplicate address detection
// sends its probe from the unspecified address). Returns false with *reason
// set when spoofed.
inline bool ndSourcesOk(const PortSources& s, const uint8_t* eth_src, const uint8_t* ipv6_src, DropReason* reason) {
  if (!s.macOk(eth_src)) {
    *reason = DropReason::kSpoofedSourceMac;
    return false;
  }
  static constexpr uint8_t kUnspecified[16] = {};
  if (!s.ipv6Ok(ipv6_src) && std::memcmp(ipv6_src, kUnspecified, 16) != 0) {
    *reason = DropReason::kSpoofedSourceIp;
    return false;
  }
  return true;
}

}  // namespace sluice
