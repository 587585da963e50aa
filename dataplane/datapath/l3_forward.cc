#include "dataplane/datapath/l3_forward.h"

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_prefetch.h>

#include <cstddef>
#include <cstring>

#include "dataplane/datapath/arp_responder.h"
#include "dataplane/datapath/nd/neighbor_discovery.h"

namespace sluice {
namespace {

// How far ahead to prefetch packet data: enough to cover the L2/L3 stage's
// per-packet latency without evicting the burst's mbuf headers.
constexpr uint16_t kPrefetchAhead = 4;

struct Verdict {
  uint16_t next;
  DropReason reason;
};

inline Verdict drop(DropReason r) { return {kNextDrop, r}; }
// The reason field is only read for drops.
inline Verdict forwardTo(uint16_t port_no) { return {port_no, DropReason{}}; }

// The port's sources when they are checked (source_check.h), else null.
const PortSources* checkedSources(const PmdSnapshot& snap, uint16_t in_port) {
  return snap.sources != nullptr ? snap.sources->checked(in_port) : nullptr;
}

Verdict forwardIpv4(const PmdSnapshot& snap, const PortSources* sources, rte_ether_hdr* eth, uint32_t len) {
  if (len < sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr)) return drop(DropReason::kTruncated);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  uint32_t ihl_bytes = (ip->version_ihl & 0x0f) * 4u;
  uint32_t l3_len = len - static_cast<uint32_t>(sizeof(rte_ether_hdr));
  if ((ip->version_ihl >> 4) != 4 || ihl_bytes < sizeof(rte_ipv4_hdr))
    return drop(DropReason::kBadIpv4Header);
  if (ihl_bytes > l3_len) return drop(DropReason::kTruncated);
  uint32_t total_len = rte_be_to_cpu_16(ip->total_length);
  if (total_len < ihl_bytes) return drop(DropReason::kBadIpv4Header);
  if (total_len > l3_len) return drop(DropReason::kTruncated);
  // Sources before the destination, as the megaflow translation decides.
  if (sources != nullptr) {
    if (!sources->macOk(eth->src_addr.addr_bytes)) return drop(DropReason::kSpoofedSourceMac);
    if (!sources->ipv4Ok(ip->src_addr)) return drop(DropReason::kSpoofedSourceIp);
  }

  uint32_t dst = ip->dst_addr;
  if (dst == snap.gateway_ip_be) return drop(DropReason::kToGateway);
  const PodRoute* route = snap.fib->lookup(dst);
  if (route == nullptr) return drop(DropReason::kNoRoute);
  if (ip->time_to_live <= 1) return drop(DropReason::kTtlExceeded);

  decrementTtl(ip);

  std::memcpy(&eth->dst_addr, route->mac, RTE_ETHER_ADDR_LEN);
  eth->src_addr = snap.gateway_mac;
  return forwardTo(route->port_no);
}

// The caller has checked that m holds an Ethernet and an IPv6 header.
Verdict answerNd(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* m) {
  if (const PortSources* sources = checkedSources(snap, in_port); sources != nullptr) {
    const auto* frame = rte_pktmbuf_mtod(m, const uint8_t*);
    DropReason why{};
    if (!ndSourcesOk(*sources, frame + offsetof(rte_ether_hdr, src_addr),
                     frame + sizeof(rte_ether_hdr) + offsetof(rte_ipv6_hdr, src_addr), &why))
      return drop(why);
  }
  // The answer may be longer than the solicitation (a DAD probe or a
  // unicast one carries no link-layer option, a router solicitation often
  // none): it may use the tailroom of a single-segment mbuf.
  const uint32_t len = rte_pktmbuf_data_len(m);
  const uint32_t to_end = uint32_t{m->buf_len} >= uint32_t{m->data_off} + len ? m->buf_len - m->data_off : len;
  const uint32_t room = m->nb_segs == 1 ? to_end : len;
  uint32_t new_len = 0;
  const NdVerdict v = answerNeighborDiscovery(snap.v6, snap.gateway_mac.addr_bytes, rte_pktmbuf_mtod(m, uint8_t*),
                                              len, room, &new_len, true, snap.port_mtus[in_port]);
  if (!v.answered) return drop(v.reason);
  // Grow or shrink the (single) segment to the advertisement.
  m->data_len = static_cast<uint16_t>(new_len);
  m->pkt_len = new_len;
  return forwardTo(in_port);
}

// An IPv6 frame to a pod's /128 route; neighbor discovery answered in place.
Verdict forwardIpv6(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* m, rte_ether_hdr* eth, uint32_t len) {
  if (len < sizeof(rte_ether_hdr) + sizeof(rte_ipv6_hdr)) return drop(DropReason::kTruncated);
  auto* ip = reinterpret_cast<rte_ipv6_hdr*>(eth + 1);
  const auto* raw = reinterpret_cast<const uint8_t*>(ip);
  if ((raw[0] >> 4) != 6) return drop(DropReason::kBadIpv6Header);
  const uint32_t payload = rte_be_to_cpu_16(ip->payload_len);
  if (payload > len - sizeof(rte_ether_hdr) - sizeof(rte_ipv6_hdr)) return drop(DropReason::kTruncated);
  // Neighbor discovery directly after the header (what a host sends).
  if (ip->proto == 58 && payload >= 4 && isNeighborDiscoveryType(raw[sizeof(rte_ipv6_hdr)]))
    return answerNd(snap, in_port, m);
  if (const PortSources* sources = checkedSources(snap, in_port); sources != nullptr) {
    if (!sources->macOk(eth->src_addr.addr_bytes)) return drop(DropReason::kSpoofedSourceMac);
    if (!sources->ipv6Ok(ip->src_addr)) return drop(DropReason::kSpoofedSourceIp);
  }
  if (snap.v6.isGateway(ip->dst_addr)) return drop(DropReason::kToGateway);
  const PodRoute6* route = snap.fib6 != nullptr ? snap.fib6->lookup(ip->dst_addr) : nullptr;
  if (route == nullptr) return drop(DropReason::kNoRoute);
  if (ip->hop_limits <= 1) return drop(DropReason::kTtlExceeded);
  ip->hop_limits = static_cast<uint8_t>(ip->hop_limits - 1);
  std::memcpy(&eth->dst_addr, route->mac, RTE_ETHER_ADDR_LEN);
  eth->src_addr = snap.gateway_mac;
  return forwardTo(route->port_no);
}

Verdict answerArp(const PmdSnapshot& snap, uint16_t in_port, rte_ether_hdr* eth, uint32_t len) {
  if (len < sizeof(rte_ether_hdr) + sizeof(rte_arp_hdr)) return drop(DropReason::kTruncated);
  auto* arp = reinterpret_cast<rte_arp_hdr*>(eth + 1);
  // A pod's ARP of any kind (a reply or gratuitous ARP too) names its own
  // addresses, or it would teach its neighbors a lie.
  if (const PortSources* sources = checkedSources(snap, in_port); sources != nullptr && isEthernetIpv4Arp(*arp)) {
    DropReason why{};
    if (!arpSourcesOk(*sources, eth->src_addr.addr_bytes, arp->arp_data.arp_sha.addr_bytes,
                      arp->arp_data.arp_sip, &why))
      return drop(why);
  }
  if (!isEthernetIpv4Arp(*arp) || arp->arp_opcode != RTE_BE16(RTE_ARP_OP_REQUEST))
    return drop(DropReason::kArpNotAnswered);
  uint32_t target = arp->arp_data.arp_tip;
  uint32_t sender = arp->arp_data.arp_sip;
  bool for_gateway = target == snap.gateway_ip_be;
  bool in_pod_cidr = (target & snap.pod_mask_be) == snap.pod_net_be;
  // The asker's own address is duplicate-address detection or a gratuitous
  // ARP: answering would tell the pod its own address is taken. A gratuitous
  // ARP names it as sender; a probe (RFC 5227) is sent from 0.0.0.0, so the
  // address is known as the asker's by the port it belongs to.
  const PodRoute* owner = snap.fib != nullptr ? snap.fib->lookup(target) : nullptr;
  if ((!for_gateway && !in_pod_cidr) || target == sender || (owner != nullptr && owner->port_no == in_port))
    return drop(DropReason::kArpNotAnswered);

  turnArpRequestIntoReply(eth, arp, snap.gateway_mac);
  return forwardTo(in_port);
}

Verdict forwardOne(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* m) {
  // Headers must sit in the first segment; a chained mbuf whose first segment
  // is shorter than the headers is treated as truncated.
  uint32_t len = rte_pktmbuf_data_len(m);
  if (len < sizeof(rte_ether_hdr)) return drop(DropReason::kTruncated);
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  switch (eth->ether_type) {
    case RTE_BE16(RTE_ETHER_TYPE_IPV4):
      return forwardIpv4(snap, checkedSources(snap, in_port), eth, len);
    case RTE_BE16(RTE_ETHER_TYPE_ARP):
      return answerArp(snap, in_port, eth, len);
    case RTE_BE16(RTE_ETHER_TYPE_IPV6):
      return forwardIpv6(snap, in_port, m, eth, len);
    default:
      return drop(DropReason::kUnsupportedEthertype);
  }
}

}  // namespace

uint16_t l3AnswerArp(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* m, DropReason* reason) {
  Verdict v = answerArp(snap, in_port, rte_pktmbuf_mtod(m, rte_ether_hdr*), rte_pktmbuf_data_len(m));
  *reason = v.reason;
  return v.next;
}

uint16_t l3AnswerNd(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* m, DropReason* reason) {
  Verdict v = answerNd(snap, in_port, m);
  *reason = v.reason;
  return v.next;
}

uint16_t l3ForwardBurst(const PmdSnapshot& snap, uint16_t in_port, rte_mbuf* const* pkts,
                        uint16_t n, uint16_t* next, DropReason* reason) {
  for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i)
    rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  uint16_t forwarded = 0;
  for (uint16_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    Verdict v = forwardOne(snap, in_port, pkts[i]);
    next[i] = v.next;
    reason[i] = v.reason;
    forwarded += v.next != kNextDrop;
  }
  return forwarded;
}

}  // namespace sluice
