// The uplink receive stage of an IPv6 underlay (uplink_stage.h): the twin of
// uplinkRxBurst for outer IPv6, with neighbor discovery where IPv4 has ARP.
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_prefetch.h>

#include <cstring>

#include "dataplane/datapath/nd/neighbor_discovery.h"
#include "dataplane/datapath/tsan_dpdk.h"
#include "dataplane/datapath/overlay/uplink_stage.h"
#include "dataplane/datapath/overlay/vxlan_decap6.h"

namespace sluice::vxlan {
namespace {

constexpr uint16_t kPrefetchAhead = 4;  // as uplink_stage.cc

// Whether the outer UDP checksum of a VXLAN packet classified as `d`
// verifies: the NIC's verdict where it gave one, else summed here over the
// UDP header and payload in every segment plus the pseudo-header. A zero
// checksum is accepted (RFC 6935 lets tunnel endpoints send it; the Linux
// kernel sends one only when told to, udp6zerocsumtx).
bool udpChecksumOk(const rte_mbuf* m, const DecapInfo6& d) {
  if (!d.udp_checksummed) return true;
  const uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
  if (l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD) return true;
  if (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD) return false;
  uint16_t body = 0;
  if (rte_raw_cksum_mbuf(m, kEthLen + decap_detail::kIpv6Len, d.udp_len, &body) != 0) return false;
  // The pseudo-header, summed as the CPU loads words, as rte_raw_cksum does.
  uint32_t sum = rte_raw_cksum(d.outer_src, 32);  // source and destination, adjacent
  const rte_be32_t len_be = rte_cpu_to_be_32(d.udp_len);
  const rte_be32_t next_be = rte_cpu_to_be_32(decap_detail::kProtoUdp);
  sum += rte_raw_cksum(&len_be, 4) + rte_raw_cksum(&next_be, 4) + body;
  while ((sum >> 16) != 0) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

}  // namespace

uint16_t uplinkRxBurst6(const OverlaySnapshot& ov, rte_mbuf** pkts, uint16_t n, TunnelMeta* meta,
                        UplinkRxOut& out) {
  out.n_drop = out.n_reply = out.n_punted = 0;
  for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  const OverlayTables& tables = *ov.tables;
  auto drop = [&out](rte_mbuf* m, DropReason r) {
    out.drop[out.n_drop] = m;
    out.reason[out.n_drop++] = r;
  };
  uint16_t kept = 0;
  for (uint16_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    rte_mbuf* m = pkts[i];
    auto* data = rte_pktmbuf_mtod(m, uint8_t*);
    const DecapInfo6 d = classifyUplinkFrame6(data, rte_pktmbuf_data_len(m), ov.decap6);
    if (d.cls == UplinkClass6::kVxlan) {
      const uint16_t t = tables.tunnelForVtep6(d.outer_src);
      if (t == kNoTunnel) {
        drop(m, DropReason::kVxlanUnknownSource);  // as over IPv4: before it costs a lookup
        continue;
      }
      if (!udpChecksumOk(m, d)) {
        drop(m, DropReason::kVxlanBadUdpChecksum);
        continue;
      }
      rte_pktmbuf_adj(m, d.inner_ofs);
      if (rte_pktmbuf_pkt_len(m) > d.inner_len)
        rte_pktmbuf_trim(m, static_cast<uint16_t>(rte_pktmbuf_pkt_len(m) - d.inner_len));
      meta[kept] = {tunnelKeyId(t), 0, d.vni};
      pkts[kept++] = m;
      TunnelCounters& c = ov.counters->tunnels[t];
      c.rx_packets.inc();
      c.rx_bytes.add(d.inner_len);
      continue;
    }
    if (d.cls == UplinkClass6::kNd) {
      const uint8_t type = data[kEthLen + decap_detail::kIpv6Len];
      if (type == kIcmpv6NeighborAdvertisement) {
        // Control checks it (hop limit, checksum, target, solicited) and
        // learns the next hop from it only if it answers a solicitation of ours.
        handOver(m);
        if (rte_ring_enqueue(ov.arp_punt, m) == 0) ++out.n_punted;
        else drop(m, DropReason::kUplinkArpPuntFull);
        continue;
      }
      uint32_t new_len = 0;
      const uint32_t len = rte_pktmbuf_data_len(m);
      const NdVerdict v = answerNeighborDiscovery(ov.vtep_nd, ov.vtep_mac.addr_bytes, data, len,
                                                  len + rte_pktmbuf_tailroom(m), &new_len, /*router=*/false);
      if (!v.answered) {
        drop(m, v.reason);
        continue;
      }
      // A solicitation is one segment (it is tiny); the answer replaces it.
      if (m->nb_segs == 1) {
        m->data_len = static_cast<uint16_t>(new_len);
        m->pkt_len = new_len;
        out.reply[out.n_reply++] = m;
      } else {
        drop(m, DropReason::kNdMalformed);
      }
      continue;
    }
    drop(m, d.reason);
  }
  return kept;
}

}  // namespace sluice::vxlan
