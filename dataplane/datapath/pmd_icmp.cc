// The PMD's answer to packets whose TTL expired (Pmd::dropExpired), apart
// from pmd.cc so that the rare path stays out of the pipeline's code: a
// router's ICMP Time Exceeded (ICMPv6 Time Exceeded, hop limit, for IPv6),
// rate-limited per PMD. PMD lcore only.
//
// Counting: every such packet is a ttl_exceeded drop (and an rx_dropped of
// its port), answered or not: the datagram received is not forwarded. An
// answer is a new packet the PMD sends, counted in icmp_errors_sent and in
// the in-port's tx counters; one the limiter holds back (icmp-error-rate,
// 0 included) in icmp_errors_rate_limited. A packet the rules forbid
// answering (icmp_error.h) is only dropped.
//
// Packets that came through the VXLAN overlay (decapsulated on the uplink,
// by the pipeline or the partial-offload branch) get no answer: the error
// would have to be encapsulated back to the sending node's VTEP, and the
// uplink carries no pod's traffic unencapsulated.
#include "dataplane/datapath/icmp_error.h"
#include "dataplane/datapath/pmd.h"

#include <rte_ether.h>

#include <cstring>

namespace sluice {

void Pmd::dropExpired(rte_mbuf* const* pkts, uint16_t count, uint16_t in_port, uint64_t now) {
  counters_.drops[static_cast<size_t>(DropReason::kTtlExceeded)].add(count);
  const vxlan::OverlaySnapshot& ov = snap_->overlay;
  const bool tunnelled = ov.enabled && in_port == ov.uplink_port;
  icmp::Ipv4ErrorParams p4;
  p4.source_be = snap_->gateway_ip_be;
  p4.mac = snap_->gateway_mac;
  p4.type = icmp::kIpv4TimeExceeded;
  p4.code = icmp::kIpv4CodeTtlExceeded;
  // IPv6 (hop limit exceeded) is answered only where the node serves IPv6:
  // the error's source is the pods' IPv6 gateway.
  icmp::Ipv6ErrorParams p6;
  std::memcpy(p6.source.data(), snap_->v6.gateway, 16);
  p6.mac = snap_->gateway_mac;
  p6.type = icmp::kIpv6TimeExceeded;
  p6.code = icmp::kIpv6CodeHopLimitExceeded;
  uint64_t sent = 0, limited = 0;
  for (uint16_t i = 0; i < count; ++i) {
    rte_mbuf* m = pkts[i];
    // Only untagged frames reach a ttl_exceeded decision: the EtherType
    // sits right after the addresses.
    const bool v6 = rte_pktmbuf_data_len(m) >= sizeof(rte_ether_hdr) &&
                    rte_pktmbuf_mtod(m, const rte_ether_hdr*)->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6);
    // The rules first: a packet that may not be answered spends no token.
    const bool refused = tunnelled || (v6 ? !snap_->v6.enabled || icmp::ipv6ErrorRefusal(m, p6.type) != icmp::Refusal::kNone
                                          : icmp::ipv4ErrorRefusal(m) != icmp::Refusal::kNone);
    if (refused) {
      rte_pktmbuf_free(m);
      continue;
    }
    if (!icmp_limiter_.admit(now)) {
      ++limited;
      rte_pktmbuf_free(m);
      continue;
    }
    const icmp::Refusal built = v6 ? icmp::buildIpv6Error(m, p6) : icmp::buildIpv4Error(m, p4);
    if (built != icmp::Refusal::kNone) {  // checked above: does not happen
      rte_pktmbuf_free(m);
      continue;
    }
    ++sent;
    enqueue(in_port, m, now);
  }
  if (sent != 0) counters_.icmp_errors_sent.add(sent);
  if (limited != 0) counters_.icmp_errors_rate_limited.add(limited);
}

}  // namespace sluice
