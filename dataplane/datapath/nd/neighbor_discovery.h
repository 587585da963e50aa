// IPv6 neighbor discovery for the pods, per packet like ARP (never cached:
// each answer is built from its own solicitation). Used on PMD lcores by
// the pipeline's screen stage (pmd.cc) and the uncached reference path
// (l3_forward.cc); pure over frame bytes, so tests and the fuzzer drive it
// without mbufs.
//
// What is answered (RFC 4861 section 7.2.3; proxy advertisements 7.2.8):
//  - a Neighbor Solicitation for the gateway's address (gateway-v6) or its
//    link-local address (fe80:: from the gateway MAC);
//  - (proxy ND) one for another address in pod-cidr-v6 that is not the
//    asker's own: pods that believe their peers are on-link still reach
//    them through us, as proxy ARP does for IPv4.
// Each is turned into a Neighbor Advertisement in place, sent back out of
// the port it came from: Solicited and Override set, Router set only for the
// gateway's own addresses (we route; a pod is a host), a target link-layer
// address option with the gateway MAC. Override is set for proxied targets
// too: each pod sits alone on its link (a vhost-user port), so the real
// owner can never answer there and no advertisement of ours must yield to it.
//
// Duplicate address detection (source ::, RFC 4862 section 5.4.3): a probe
// is answered only for the gateway's addresses, which really are taken (to
// the all-nodes group, Solicited clear, as RFC 4861 section 7.2.4 asks). A
// probe for any other address is a pod checking its own tentative address:
// we cannot tell which pod's (the source is unspecified), and answering
// would make the pod declare its address duplicate and never use it. The
// control path already guarantees pod addresses unique.
//
// A solicitation must pass RFC 4861 section 7.1.1's checks (hop limit 255,
// code 0, valid ICMPv6 checksum, at least 24 bytes, target not multicast,
// options of non-zero length inside the message, a DAD probe to the
// target's solicited-node group and without a source link-layer option)
// plus ours (no extension headers; destination the target or its
// solicited-node group), else it is dropped as nd_malformed (as is one
// whose buffer has no room for the longer answer, which never happens with
// DPDK's mbufs: their data room is 2 KB).
//
// A Router Solicitation (RFC 4861 section 6.2.6) is answered, when the pod
// network has a router lifetime (ipv6-router-lifetime), with a Router
// Advertisement from the gateway's link-local address (section 6.1.2 wants
// a link-local source), to the asker or, from ::, to all nodes: hop limit
// 64 for the pod's own packets, neither Managed nor Other flag (the CNI
// result configures the pod), the router lifetime, a source link-layer
// address option with the gateway MAC and, when the port has one, an MTU
// option. It carries no prefix: each pod's address is a /128 routed by us,
// so no prefix may be declared on-link, and addresses come from IPAM, not
// from autoconfiguration. Answering at once instead of after section
// 6.2.6's random delay is safe: each pod is alone on its link.
// A solicitation must pass section 6.1.1's checks (hop limit 255, code 0,
// valid checksum, at least 8 bytes, options of non-zero length inside the
// message, none from ::) and be addressed to all routers or to one of the
// gateway's addresses; otherwise nd_malformed, or nd_not_answered for one
// addressed elsewhere.
// Other neighbor discovery messages (router solicitations without a
// lifetime configured, router and neighbor advertisements, redirects) are
// dropped as nd_not_served.
#pragma once

#include <cstdint>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/forwarding_table_v6.h"

namespace sluice {

inline constexpr uint8_t kIcmpv6RouterSolicitation = 133;
inline constexpr uint8_t kIcmpv6RouterAdvertisement = 134;
inline constexpr uint8_t kIcmpv6Redirect = 137;
inline constexpr uint8_t kIcmpv6NeighborSolicitation = 135;
inline constexpr uint8_t kIcmpv6NeighborAdvertisement = 136;

// ICMPv6 types of neighbor discovery (133..137): handled per packet here,
// never routed.
inline bool isNeighborDiscoveryType(uint8_t icmp_type) {
  return icmp_type >= kIcmpv6RouterSolicitation && icmp_type <= kIcmpv6Redirect;
}

// The advertisement's length: Ethernet 14, IPv6 40, ICMPv6 NA 24, target
// link-layer address option 8.
inline constexpr uint32_t kNeighborAdvertisementFrameLen = 86;
// A router advertisement's: Ethernet 14, IPv6 40, ICMPv6 RA 16, source
// link-layer address option 8, MTU option 8 (when the port has an MTU).
inline constexpr uint32_t kRouterAdvertisementFrameLen = 86;
inline constexpr uint32_t kRouterAdvertisementNoMtuFrameLen = 78;
// The longest answer: what `room` must allow for any to be sent.
inline constexpr uint32_t kNeighborDiscoveryAnswerRoom = 86;

struct NdVerdict {
  bool answered = false;  // the frame now holds the advertisement, *new_len bytes
  DropReason reason{};    // when not answered
};

// Answers the untagged IPv6 frame frame[0, len) carrying neighbor discovery
// in place. `room` is how many bytes from frame may be written (at least
// len; an answer needs kNeighborDiscoveryAnswerRoom). Reads only
// frame[0, len).
// router=false clears the advertisement's Router flag for the gateway's
// addresses too and answers no router solicitation (an IPv6 underlay's VTEP
// answering for itself is a host). link_mtu: the port's IP MTU, advertised
// in a router advertisement's MTU option (0: none).
NdVerdict answerNeighborDiscovery(const Ipv6PodNet& net, const uint8_t gateway_mac[6], uint8_t* frame, uint32_t len,
                                  uint32_t room, uint32_t* new_len, bool router = true, uint16_t link_mtu = 0);

// RFC 1071 sum of the ICMPv6 pseudo-header (RFC 8200 section 8.1) and the
// message body[0, body_len), as the checksum field should hold it (a
// message whose checksum field is already correct sums to 0).
uint16_t icmpv6Checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* body, uint32_t body_len);

}  // namespace sluice
