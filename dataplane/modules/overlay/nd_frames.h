// Neighbor discovery frames the control path sends and reads on an IPv6
// underlay's uplink (resolving the VTEP next hops, as arp_frames.h does
// over IPv4). Plain bytes, control thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/net_address.h"

namespace sluice {

// A neighbor solicitation for `target` from (mac, ip): to the target's
// solicited-node group (RFC 4861 section 7.2.2), hop limit 255, with a source
// link-layer address option (so the answer can be unicast to us).
std::vector<uint8_t> buildNeighborSolicitation(MacAddress mac, const Ipv6Address& ip, const Ipv6Address& target);

struct NeighborAdvertisement {
  Ipv6Address target;       // whose MAC this tells
  MacAddress target_mac;    // the target link-layer address option
  Ipv6Address dst;          // the IPv6 destination
  MacAddress eth_dst;       // the frame's Ethernet destination
  bool solicited = false;   // the S flag: it answers a solicitation
};
// An untagged IPv6 frame holding a neighbor advertisement that passes RFC
// 4861 section 7.1.2's checks (hop limit 255, code 0, ICMPv6 checksum, at
// least 24 bytes, target not multicast, options of nonzero length inside
// the message) and carries a target link-layer address option (which an
// answer to a multicast solicitation must); nullopt otherwise.
std::optional<NeighborAdvertisement> parseNeighborAdvertisement(const uint8_t* data, size_t len);

}  // namespace sluice
