// IPv4 fragmentation on the PMD's cold path (ipv4_fragment.h).
#include "dataplane/datapath/ipv4_fragment.h"

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>

#include <cstring>

namespace sluice {

uint32_t fragmentIpv4(rte_mbuf* m, uint16_t mtu, rte_mempool* pool, rte_mbuf** out) {
  if (pool == nullptr) {
    rte_pktmbuf_free(m);
    return 0;
  }
  rte_ether_hdr eth;
  std::memcpy(&eth, rte_pktmbuf_mtod(m, const void*), sizeof(eth));
  const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(rte_pktmbuf_mtod(m, const uint8_t*) + sizeof(eth));
  const uint32_t ip_len = rte_be_to_cpu_16(ip->total_length);
  // A fragment ending past 65535 bytes (the "ping of death" shape) is no
  // datagram's part; cut again, its pieces' 13-bit offsets would wrap.
  const uint32_t offset = (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK) * 8u;
  const uint32_t ihl = (ip->version_ihl & RTE_IPV4_HDR_IHL_MASK) * 4u;
  if (offset + (ip_len - ihl) > 0xffff) {
    rte_pktmbuf_free(m);
    return 0;
  }
  // The library fragments the mbuf's whole data as the datagram: the
  // Ethernet header goes, and so does any trailer after the IP packet (the
  // last segment holds it; a trailer longer than that is not worth saving).
  rte_pktmbuf_adj(m, sizeof(eth));
  // Shorter than its total length: a truncated datagram, whose pieces would
  // announce data they do not carry.
  if (rte_pktmbuf_pkt_len(m) < ip_len) {
    rte_pktmbuf_free(m);
    return 0;
  }
  if (rte_pktmbuf_pkt_len(m) > ip_len &&
      rte_pktmbuf_trim(m, static_cast<uint16_t>(rte_pktmbuf_pkt_len(m) - ip_len)) != 0) {
    rte_pktmbuf_free(m);
    return 0;
  }
  // One pool for both kinds of mbuf: the indirect ones borrow a buffer they
  // do not use, for the moment a fragment is in flight.
  const int32_t n = rte_ipv4_fragment_packet(m, out, kMaxIpv4Fragments, mtu, pool, pool);
  // The fragments hold references to m's segments; ours goes.
  rte_pktmbuf_free(m);
  if (n <= 0) return 0;
  for (int32_t i = 0; i < n; ++i) {
    rte_mbuf* f = out[i];
    auto* hdr = rte_pktmbuf_mtod(f, rte_ipv4_hdr*);
    hdr->hdr_checksum = 0;
    hdr->hdr_checksum = rte_ipv4_cksum(hdr);
    std::memcpy(rte_pktmbuf_prepend(f, sizeof(eth)), &eth, sizeof(eth));
    f->ol_flags = 0;
    f->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4;
    f->tx_offload = 0;
  }
  return static_cast<uint32_t>(n);
}

}  // namespace sluice
