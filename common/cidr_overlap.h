// Overlap and extent of pod CIDRs, both families: what the remote-node
// tables (sluiced's overlay, the node controller's plan) check so that no
// address belongs to two nodes. Pure; any thread.
#pragma once

#include <cstdint>

#include "common/net_address.h"

namespace sluice {

// Two CIDRs overlap iff one holds the other's network address.
inline bool cidrsOverlap(const Ipv4Cidr& a, const Ipv4Cidr& b) {
  return a.contains(b.network) || b.contains(a.network);
}
inline bool cidrsOverlap(const Ipv6Cidr& a, const Ipv6Cidr& b) {
  return a.contains(b.network) || b.contains(a.network);
}

// The last address of an IPv6 CIDR (host bits all one). Ipv6Address orders
// as the 128-bit numbers do, so CIDRs that never overlap, kept by first
// address, are ordered by last address too (the tables' one-search overlap
// test relies on it, as for IPv4 with broadcast()).
inline Ipv6Address lastAddress(const Ipv6Cidr& c) {
  Ipv6Address last = c.network;
  for (uint32_t bit = c.prefix_len; bit < 128; ++bit) last.bytes[bit / 8] |= static_cast<uint8_t>(0x80u >> (bit % 8));
  return last;
}

}  // namespace sluice
