#include "dataplane/datapath/overlay/uplink_stage.h"

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_prefetch.h>

#include <cstring>

#include "dataplane/datapath/arp_responder.h"
#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/tsan_dpdk.h"

namespace sluice::vxlan {
namespace {

// How far ahead the stage prefetches frame data (as l3_forward.cc).
constexpr uint16_t kPrefetchAhead = 4;

// ARP on the uplink: a request for our VTEP is answered in place (true);
// a reply addressed to our VTEP is punted to control's neighbor table.
enum class ArpVerdict : uint8_t { kReply, kPunt, kDrop };

ArpVerdict handleArp(const OverlaySnapshot& ov, rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < sizeof(rte_ether_hdr) + sizeof(rte_arp_hdr)) return ArpVerdict::kDrop;
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  auto* arp = reinterpret_cast<rte_arp_hdr*>(eth + 1);
  if (!isEthernetIpv4Arp(*arp)) return ArpVerdict::kDrop;
  if (arp->arp_data.arp_tip != ov.decap.vtep_ip_be) return ArpVerdict::kDrop;
  if (arp->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY)) return ArpVerdict::kPunt;
  if (arp->arp_opcode != RTE_BE16(RTE_ARP_OP_REQUEST) || arp->arp_data.arp_sip == arp->arp_data.arp_tip)
    return ArpVerdict::kDrop;
  turnArpRequestIntoReply(eth, arp, ov.vtep_mac);
  return ArpVerdict::kReply;
}

// An ARP frame for control (a reply resolving a next hop): into the punt
// ring, or dropped as kUplinkArpPuntFull when the ring is full.
void puntArp(const OverlaySnapshot& ov, rte_mbuf* m, UplinkRxOut& out) {
  handOver(m);  // to control's thread, through a ring TSan cannot see into
  if (rte_ring_enqueue(ov.arp_punt, m) == 0) {
    ++out.n_punted;
    return;
  }
  out.drop[out.n_drop] = m;
  out.reason[out.n_drop++] = DropReason::kUplinkArpPuntFull;
}

// A frame the VXLAN classification refused, when the external network is
// on (the cold side of the stage: no VXLAN packet comes here). True: an
// IPv4 packet of the external network, its tag popped, to continue through
// the pipeline untunnelled; otherwise it is dropped, answered or punted
// into `out` here.
[[gnu::noinline]] bool externalRx(const OverlaySnapshot& ov, rte_mbuf* m, const DecapInfo& d, UplinkRxOut& out) {
  auto drop = [&](DropReason r) {
    out.drop[out.n_drop] = m;
    out.reason[out.n_drop++] = r;
    return false;
  };
  // Untagged IPv4 that is not VXLAN for us (another destination, another
  // protocol or port, a fragment not addressed to our VTEP) may be the
  // external network's; malformed IPv4 and bad VXLAN stay what they were.
  const bool plain_ipv4 = d.reason == DropReason::kVxlanWrongVtep || d.reason == DropReason::kVxlanFragment ||
                          d.reason == DropReason::kUplinkNotVxlan;
  if (!plain_ipv4) return drop(d.reason);
  const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (d.reason == DropReason::kVxlanFragment && len >= kEthLen + kIpv4Len) {
    uint32_t dst_be;
    std::memcpy(&dst_be, data + kEthLen + 16, 4);
    if (dst_be == ov.decap.vtep_ip_be) return drop(d.reason);
  }
  const ExternalRxInfo x = classifyExternalFrame(data, len, ov.external.vlan, d.reason);
  if (x.cls == ExternalRx::kDrop) return drop(x.reason);
  if (x.tagged) popVlanTag(m);
  if (x.cls == ExternalRx::kIpv4) return true;
  // ARP in the external network's VLAN: as untagged ARP, the reply tagged again.
  switch (handleArp(ov, m)) {
    case ArpVerdict::kReply:
      if (!pushVlanTag(m, ov.external.vlan)) return drop(DropReason::kExternalNoHeadroom);
      out.reply[out.n_reply++] = m;
      return false;
    case ArpVerdict::kPunt:
      puntArp(ov, m, out);
      return false;
    case ArpVerdict::kDrop:
      break;
  }
  return drop(DropReason::kArpNotAnswered);
}

}  // namespace

uint16_t uplinkRxBurst(const OverlaySnapshot& ov, rte_mbuf** pkts, uint16_t n, TunnelMeta* meta,
                       UplinkRxOut& out) {
  if (ov.underlay_ipv6) [[unlikely]]
    return uplinkRxBurst6(ov, pkts, n, meta, out);  // once per burst: IPv4 pays this test alone
  out.n_drop = out.n_reply = out.n_punted = 0;
  for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  const OverlayTables& tables = *ov.tables;
  uint16_t kept = 0;
  for (uint16_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    rte_mbuf* m = pkts[i];
    // Headers must sit in the first segment (as for key extraction); a
    // chained frame's stated lengths are checked against all of it.
    const DecapInfo d = classifyUplinkFrame(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), ov.decap,
                                            m->nb_segs != 1 ? rte_pktmbuf_pkt_len(m) : 0);
    if (d.cls == UplinkClass::kVxlan) {
      const uint16_t t = tables.tunnelForVtep(d.outer_src_be);
      if (t == kNoTunnel) {
        // Only known remote nodes may send: refused here, before its inner
        // packet costs a key, a lookup, an upcall or a megaflow (any host
        // that reaches UDP 4789 could otherwise fill the flow table).
        out.drop[out.n_drop] = m;
        out.reason[out.n_drop++] = DropReason::kVxlanUnknownSource;
        continue;
      }
      rte_pktmbuf_adj(m, d.inner_ofs);
      // Outer Ethernet padding is not part of the inner frame.
      if (rte_pktmbuf_pkt_len(m) > d.inner_len) rte_pktmbuf_trim(m, static_cast<uint16_t>(rte_pktmbuf_pkt_len(m) - d.inner_len));
      meta[kept] = {d.outer_src_be, d.outer_dst_be, d.vni};
      pkts[kept++] = m;
      TunnelCounters& c = ov.counters->tunnels[t];
      c.rx_packets.inc();
      c.rx_bytes.add(d.inner_len);
      continue;
    }
    if (d.cls == UplinkClass::kArp) {
      switch (handleArp(ov, m)) {
        case ArpVerdict::kReply:
          out.reply[out.n_reply++] = m;
          continue;
        case ArpVerdict::kPunt:
          puntArp(ov, m, out);
          continue;
        case ArpVerdict::kDrop:
          out.drop[out.n_drop] = m;
          out.reason[out.n_drop++] = DropReason::kArpNotAnswered;
          continue;
      }
    }
    if (ov.external.enabled) [[unlikely]] {
      if (externalRx(ov, m, d, out)) {
        meta[kept] = {0, 0, 0};
        pkts[kept++] = m;
      }
      continue;
    }
    out.drop[out.n_drop] = m;
    out.reason[out.n_drop++] = d.reason;
  }
  return kept;
}

}  // namespace sluice::vxlan
