// The forwarding stage of the fast path: for each packet of an rx burst,
// decide where it goes and rewrite it in place. Runs on PMD threads only.
//
//  - IPv4 to a pod on this node: Ethernet source := gateway MAC, destination
//    := the pod's MAC, TTL decremented with an incremental checksum update
//    (RFC 1624), next := the pod's port.
//  - IPv6 to a pod on this node: the same Ethernet rewrite, hop limit - 1
//    (IPv6 has no header checksum), next := the pod's port.
//  - ARP request for the gateway, or for another address in the pod CIDR
//    (proxy ARP): turned into the reply in place, next := the ingress port.
//  - IPv6 neighbor solicitation likewise (neighbor_discovery.h).
//  - Anything else: next := kNextDrop with a named reason.
//
// A stage function over a burst: it writes one next-step per packet
// and returns how many were not dropped; the caller groups them by output port.
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

inline constexpr uint16_t kNextDrop = kInvalidPort;

uint16_t l3ForwardBurst(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* const* pkts,
                        uint16_t n, uint16_t* next, DropReason* reason);

// --- The per-packet actions, shared with the cached pipeline (pmd.cc),
// which decides once per megaflow and then only applies them.

// The ARP stage: answers a request for the gateway or (proxy ARP) another
// address in the pod CIDR in place; returns in_port, or kNextDrop with *reason.
// ARP stays a per-packet action and is never cached: the reply is built
// from each request's own fields.
uint16_t l3AnswerArp(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* m, DropReason* reason);
// The neighbor discovery stage, likewise per packet (neighbor_discovery.h):
// for an untagged IPv6 frame carrying ICMPv6 neighbor discovery; the
// advertisement replaces the solicitation in m (grown or trimmed to its
// length), returns in_port, or kNextDrop with *reason.
uint16_t l3AnswerNd(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* m, DropReason* reason);
// RFC 1624 eqn. 3: the IPv4 header checksum after one 16-bit header word
// changes from old_word to new_word (all in network byte order).
inline uint16_t ipv4ChecksumAdjust(uint16_t checksum, uint16_t old_word, uint16_t new_word) {
  // HC' = ~(~HC + ~m + m'), one's complement arithmetic folded back to 16 bits.
  uint32_t sum = static_cast<uint16_t>(~checksum);
  sum += static_cast<uint16_t>(~old_word);
  sum += new_word;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// TTL - 1 (TTL >= 1) with the checksum adjusted for it: RFC 1624 eqn. 3 for
// this one change. The TTL is the high byte of its checksummed word, so the
// word drops by 0x0100 and the checksum grows by 0x0100 in one's complement
// (carry folded back), the form Linux's ip_decrease_ttl uses; equal to
// ipv4ChecksumAdjust for every checksum and TTL (l3_forward_test checks all).
// Four instructions instead of the general form's dependency chain, which
// perf showed as the costliest part of the encap action. Neither store is
// read back wide (a wide load over a narrow store stalls on forwarding).
inline void decrementTtl(rte_ipv4_hdr* ip) {
  uint16_t checksum;
  std::memcpy(&checksum, &ip->hdr_checksum, 2);
  const uint32_t sum = uint32_t{checksum} + RTE_BE16(0x0100);
  checksum = static_cast<uint16_t>(sum + (sum >= 0xffff));
  std::memcpy(&ip->hdr_checksum, &checksum, 2);
  ip->time_to_live = static_cast<uint8_t>(ip->time_to_live - 1);
}

// The output action's L3 rewrite towards the pod on port_no, for an untagged
// IPv4 frame whose headers the flow key extraction has validated and whose
// TTL is at least 2: Ethernet source := gateway MAC, destination :=
// snap.port_macs[port_no], TTL - 1 with an incremental checksum update.
// Inline: it runs once per forwarded packet, and a call costs about as much
// as the rewrite itself.
inline void l3RewriteToPod(const PmdSnapshot& snap, rte_mbuf* m, uint16_t port_no) {
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  decrementTtl(ip);
  eth->dst_addr = snap.port_macs[port_no];
  eth->src_addr = snap.gateway_mac;
}

// The output action's L3 rewrite for an untagged IPv6 frame (headers
// validated by key extraction, hop limit at least 2): the Ethernet rewrite
// of l3RewriteToPod and hop limit - 1; no checksum covers it.
inline void l3RewriteToPod6(const PmdSnapshot& snap, rte_mbuf* m, uint16_t port_no) {
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  auto* ip = reinterpret_cast<rte_ipv6_hdr*>(eth + 1);
  ip->hop_limits = static_cast<uint8_t>(ip->hop_limits - 1);
  eth->dst_addr = snap.port_macs[port_no];
  eth->src_addr = snap.gateway_mac;
}

}  // namespace sluice
