// The per-tunnel VXLAN header template: the outer Ethernet/IPv4/UDP/VXLAN
// headers toward one remote VTEP, prepared whole by the control path (when a
// remote node or its next hop's MAC changes) so that encapsulating a packet
// is one 50-byte copy plus the three fields that differ per packet (IPv4
// total length and checksum, UDP source port and length).
// Built on the control thread; read by PMDs through the overlay tables of
// their snapshot (overlay_tables.h), never modified after publication.
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/overlay/vxlan_decap.h"

namespace sluice::vxlan {

// Offsets inside the template of the fields written per packet.
inline constexpr uint32_t kOfsIpTotalLen = kEthLen + 2;
inline constexpr uint32_t kOfsIpChecksum = kEthLen + 10;
inline constexpr uint32_t kOfsUdpSrcPort = kEthLen + kIpv4Len;
inline constexpr uint32_t kOfsUdpLen = kEthLen + kIpv4Len + 4;
// Outer TTL: the Linux kernel's VXLAN default when none is configured.
inline constexpr uint8_t kOuterTtl = 64;

struct alignas(64) EncapTemplate {
  // The outer headers as sent, with total length, checksum, source port and
  // UDP length zero (filled per packet). The UDP checksum stays zero (the
  // VXLAN standard says it SHOULD for IPv4).
  uint8_t outer[kOuterLen] = {};
  // The inner Ethernet destination: the remote node's VTEP device MAC (the
  // kernel's VXLAN device drops frames not addressed to it).
  uint8_t inner_dst[6] = {};
  // One's complement sum (not folded, not inverted) of the outer IPv4 header
  // as in `outer` (total length and checksum zero): per packet the checksum
  // is ~fold(sum + total_length), no pass over the header.
  uint32_t ip_sum = 0;
  // False while the next hop's MAC is unknown: packets are dropped as
  // neighbor_unresolved (and control keeps asking by ARP).
  bool valid = false;
  uint16_t tunnel = 0;  // tunnel index (for counters)
};

struct EncapParams {
  uint8_t src_mac[6];        // our uplink MAC
  uint8_t dst_mac[6];        // the next hop's MAC (zero if unresolved)
  uint32_t src_ip_be = 0;    // our VTEP
  uint32_t dst_ip_be = 0;    // the remote VTEP
  uint32_t vni = 0;          // host order
  uint8_t inner_dst[6];      // the remote's inner MAC
  bool resolved = false;     // dst_mac is known
  uint16_t tunnel = 0;
};

// Builds a template (control thread; pure).
EncapTemplate buildEncapTemplate(const EncapParams& p);

inline void encapStore16be(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// The outer IPv4 header checksum for an inner frame of inner_len bytes.
inline uint16_t outerIpChecksum(const EncapTemplate& t, uint32_t inner_len) {
  uint32_t sum = t.ip_sum + kIpv4Len + kUdpLen + kVxlanLen + inner_len;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);  // host order value of the big-endian field
}

// The outer UDP source port for a flow: from the inner flow's hash, in the
// dynamic range 49152-65535 (as the VXLAN standard recommends), so that the
// receiver's RSS spreads flows while each flow keeps one port (no reordering).
inline uint16_t outerSourcePort(uint32_t flow_hash) {
  return static_cast<uint16_t>(0xc000u | ((flow_hash ^ (flow_hash >> 16)) & 0x3fffu));
}

// Writes the outer headers for an inner frame of inner_len bytes at `out`
// (kOuterLen bytes). software_checksum=false leaves the IPv4 checksum zero
// for the NIC to fill. Inline: once per encapsulated packet.
inline void writeOuterHeaders(const EncapTemplate& t, uint32_t inner_len, uint32_t flow_hash, bool software_checksum,
                       uint8_t* out) {
  std::memcpy(out, t.outer, kOuterLen);
  const uint32_t ip_total = kIpv4Len + kUdpLen + kVxlanLen + inner_len;
  encapStore16be(out + kOfsIpTotalLen, ip_total);
  if (software_checksum) encapStore16be(out + kOfsIpChecksum, outerIpChecksum(t, inner_len));
  encapStore16be(out + kOfsUdpSrcPort, outerSourcePort(flow_hash));
  encapStore16be(out + kOfsUdpLen, kUdpLen + kVxlanLen + inner_len);
}

}  // namespace sluice::vxlan
