// The PMD's overlay steps over mbufs: the uplink receive stage (VXLAN decap,
// ARP for our VTEP, named drops) and the encapsulation action. PMD lcores
// only: no heap, locks or syscalls; the ARP punt is a lock-free rte_ring.
//
// uplinkRxBurst is a stage function over a burst: decapsulated
// packets are compacted in place to the front of the burst (order kept) with
// their tunnel metadata beside them and continue through key extraction and
// lookup as if they had arrived on the uplink port without outer headers;
// the rest are handed back to the caller in `out` (drops with their reason,
// ARP replies to send, punted ARP the caller only counts).
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/external_network.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/overlay/overlay_snapshot.h"

namespace sluice::vxlan {

// The outer headers' facts a decapsulated packet's flow key carries.
struct TunnelMeta {
  uint32_t src_be;  // sending VTEP
  uint32_t dst_be;  // our VTEP
  uint32_t vni;     // host order
};

struct UplinkRxOut {
  uint16_t n_drop = 0;
  uint16_t n_reply = 0;   // ARP replies / neighbor advertisements (built in place) to send on the uplink
  uint16_t n_punted = 0;  // ARP replies / neighbor advertisements for our VTEP handed to control
  rte_mbuf* drop[kBurstSize];
  DropReason reason[kBurstSize];
  rte_mbuf* reply[kBurstSize];
};

// Returns how many packets were decapsulated (now pkts[0..ret)).
uint16_t uplinkRxBurst(const OverlaySnapshot& ov, rte_mbuf** pkts, uint16_t n, TunnelMeta* meta,
                       UplinkRxOut& out);
// The same stage on an IPv6 underlay (uplink_stage6.cc; uplinkRxBurst
// hands the burst over): VXLAN over IPv6 from known remote VTEPs, their UDP
// checksums verified, each packet's TunnelMeta carrying its tunnel's
// tunnelKeyId as src_be and 0 as dst_be (so offload, which would match an
// outer IPv4 header, refuses these megaflows); neighbor solicitations for our
// VTEP answered in place (in `reply`); neighbor advertisements punted to
// control's neighbor table (the ARP punt ring).
uint16_t uplinkRxBurst6(const OverlaySnapshot& ov, rte_mbuf** pkts, uint16_t n, TunnelMeta* meta,
                        UplinkRxOut& out);

// Bit i set: packet i came through another tunnel than packet i - 1, so it
// cannot continue i - 1's run of one key (flow::extractFlowKeyRuns' breaks).
inline uint64_t tunnelChanges(const TunnelMeta* meta, uint16_t n) {
  static_assert(kBurstSize <= 64);
  uint64_t changes = 1;
  for (uint16_t i = 1; i < n; ++i) {
    const bool same = meta[i].src_be == meta[i - 1].src_be && meta[i].dst_be == meta[i - 1].dst_be &&
                      meta[i].vni == meta[i - 1].vni;
    changes |= uint64_t{!same} << i;
  }
  return changes;
}

// Writes the tunnel fields of each run's key from its packets' meta (after
// key extraction, which leaves them zero; a run's packets share one tunnel).
// The hash stays the inner one: equal keys still hash equally, and the outer
// fields add nothing to spreading.
inline void applyTunnelMeta(const TunnelMeta* meta, const flow::PacketRun* runs, uint16_t n_runs,
                            flow::FlowKey* keys) {
  for (uint16_t r = 0; r < n_runs; ++r) {
    const TunnelMeta& m = meta[runs[r].first];
    keys[r].tun_src = m.src_be;
    keys[r].tun_dst = m.dst_be;
    keys[r].tun_vni = m.vni;
  }
}

// The encap action for a validated untagged IPv4 frame with TTL >= 2, or
// (kInnerIpv6) IPv6 frame with hop limit >= 2: inner L3 rewrite (Ethernet
// source := gateway MAC, destination := the remote's inner MAC, TTL or hop
// limit - 1) and the tunnel's outer headers prepended: IPv4 (50 bytes) or,
// kOuterIpv6, IPv6 (70 bytes, with the UDP checksum summed over every
// segment of a chained mbuf). Returns the uplink's port number, or
// kInvalidPort with *reason (unresolved next hop, over the overlay MTU, no
// headroom). Inline: once per encapsulated packet; both families are
// template arguments so that IPv4 pays no test for IPv6 (the caller picks
// once per run).
template <bool kInnerIpv6 = false, bool kOuterIpv6 = false>
inline uint16_t encapOne(const OverlaySnapshot& ov, const rte_ether_addr& gateway_mac, rte_mbuf* m, uint16_t tunnel,
                         uint32_t flow_hash, DropReason* reason) {
  const auto& t = [&]() -> const auto& {
    if constexpr (kOuterIpv6) return ov.tables->tunnel6(tunnel);
    else return ov.tables->tunnel(tunnel);
  }();
  constexpr uint32_t kOuter = kOuterIpv6 ? kOuterLen6 : kOuterLen;
  if (!t.valid) {
    *reason = DropReason::kNeighborUnresolved;
    return kNextDrop;
  }
  // The inner IP packet, header included, either family.
  const uint32_t inner_len = rte_pktmbuf_pkt_len(m);
  if (inner_len - sizeof(rte_ether_hdr) > ov.overlay_mtu) {
    *reason = DropReason::kOverlayMtuExceeded;
    return kNextDrop;
  }
  if (rte_pktmbuf_headroom(m) < kOuter) {
    *reason = DropReason::kEncapNoHeadroom;
    return kNextDrop;
  }
  // Inner L3 rewrite, as toward a local pod but addressed to the remote's
  // VTEP device.
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  if constexpr (kInnerIpv6) {
    auto* ip6 = reinterpret_cast<rte_ipv6_hdr*>(eth + 1);
    ip6->hop_limits = static_cast<uint8_t>(ip6->hop_limits - 1);
  } else {
    decrementTtl(reinterpret_cast<rte_ipv4_hdr*>(eth + 1));
  }
  std::memcpy(&eth->dst_addr, t.inner_dst, RTE_ETHER_ADDR_LEN);
  eth->src_addr = gateway_mac;

  if constexpr (kOuterIpv6) {
    // The inner frame's sum after its rewrite, over every segment (the
    // first segment's data_len is not the frame when mbufs are chained).
    uint16_t inner_sum = 0;
    (void)rte_raw_cksum_mbuf(m, 0, inner_len, &inner_sum);  // fails only for a range past pkt_len
    auto* outer = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kOuter));
    // rte_raw_cksum sums words as the CPU loads them; the template sums
    // them big-endian (a one's complement sum swaps with its words).
    writeOuterHeaders6(t, inner_len, flow_hash, rte_be_to_cpu_16(inner_sum), outer);
  } else {
    auto* outer = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kOuter));
    writeOuterHeaders(t, inner_len, flow_hash, !ov.tx_ip_checksum_offload, outer);
  }
  if (!kOuterIpv6 && ov.tx_ip_checksum_offload) {
    // Metadata writes only where the value changes (a vhost mbuf arrives
    // with these zero; a recycled one may already hold them).
    constexpr uint64_t kFlags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
    if ((m->ol_flags & kFlags) != kFlags) m->ol_flags |= kFlags;
    if (m->l2_len != kEthLen) m->l2_len = kEthLen;
    if (m->l3_len != kIpv4Len) m->l3_len = kIpv4Len;
  }
  TunnelCounters& c = ov.counters->tunnels[tunnel];
  c.tx_packets.inc();
  c.tx_bytes.add(inner_len);
  return ov.uplink_port;
}

// The external action for a validated untagged IPv4 frame with TTL >= 2:
// Ethernet source := uplink MAC, destination := the external gateway's MAC,
// TTL - 1 (checksum adjusted), the VLAN tag pushed when there is one (into
// the first segment's headroom: a chained jumbo frame grows at its front).
// True when the frame is ready to send, else false with *reason.
inline bool externalRewrite(const ExternalSnapshot& x, rte_mbuf* m, DropReason* reason) {
  if (!x.resolved) {
    *reason = DropReason::kExternalGatewayUnresolved;
    return false;
  }
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  decrementTtl(reinterpret_cast<rte_ipv4_hdr*>(eth + 1));
  eth->dst_addr = x.gateway_mac;
  eth->src_addr = x.uplink_mac;
  if (x.vlan != 0 && !pushVlanTag(m, x.vlan)) {
    *reason = DropReason::kExternalNoHeadroom;
    return false;
  }
  return true;
}

}  // namespace sluice::vxlan
