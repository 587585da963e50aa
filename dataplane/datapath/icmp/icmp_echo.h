// The pods' gateway answering ping: an ICMP echo request (RFC 792) or an
// ICMPv6 echo request (RFC 4443 4.1) addressed to the gateway is turned into
// its echo reply in the request's own mbuf, as a host does: Ethernet back to
// the frame's sender (destination := its source MAC, source := the gateway
// MAC), the IP addresses swapped (the reply's source is the address the
// request was sent to), TTL / hop limit 64, type echo reply, identifier,
// sequence number and data unchanged, checksums recomputed. Nothing is
// allocated: a PMD answers on its rare path (pmd_icmp.cc).
//
// Refused (the frame is left untouched, the caller drops it): a frame that
// is not an untagged, unfragmented echo request whose headers and datagram
// sit whole in one segment (for IPv6: ICMPv6 right behind the fixed header,
// no extension headers), a link-layer multicast/broadcast destination, a
// source that names no single host (as for ICMP errors, icmp_error.h), and
// an mbuf the builder may not rewrite (shared, indirect, external, chained).
//
// Pure functions of their arguments; any thread.
#pragma once

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "dataplane/datapath/icmp/icmp_error.h"

namespace sluice::icmp {

inline constexpr uint8_t kIpv4EchoRequest = 8;
inline constexpr uint8_t kIpv4EchoReply = 0;
inline constexpr uint8_t kIpv6EchoRequest = 128;
inline constexpr uint8_t kIpv6EchoReply = 129;
// TTL / hop limit of a reply (the usual initial value, as for errors).
inline constexpr uint8_t kEchoReplyTtl = kErrorTtl;

Refusal buildIpv4EchoReply(rte_mbuf* m, const rte_ether_addr& gateway_mac);
Refusal buildIpv6EchoReply(rte_mbuf* m, const rte_ether_addr& gateway_mac);

}  // namespace sluice::icmp
