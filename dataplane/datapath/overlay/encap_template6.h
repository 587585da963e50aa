// The per-tunnel header template of an IPv6 underlay: outer Ethernet, IPv6,
// UDP and VXLAN toward one remote IPv6 VTEP, prepared by the control path as
// the IPv4 one is (encap_template.h), kept apart from it so that an IPv4
// underlay's template stays one cache line. Per packet: one 70-byte copy,
// the IPv6 payload length and flow label, the UDP source port and length,
// and the UDP checksum, which IPv6 requires (the Linux kernel's VXLAN drops
// zero-checksum IPv6 unless told otherwise, udp6zerocsumrx). The checksum's
// constant part (addresses, next header, destination port, VXLAN header) is
// summed once here; the caller adds the inner frame's sum, taken over every
// segment of a chained mbuf.
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/overlay/encap_template.h"
#include "dataplane/datapath/overlay/vxlan_decap6.h"

namespace sluice::vxlan {

inline constexpr uint32_t kOfs6FlowLabel = kEthLen + 1;   // low nibble of byte 1, bytes 2..3
inline constexpr uint32_t kOfs6PayloadLen = kEthLen + 4;
inline constexpr uint32_t kOfs6UdpSrcPort = kEthLen + decap_detail::kIpv6Len;
inline constexpr uint32_t kOfs6UdpLen = kOfs6UdpSrcPort + 4;
inline constexpr uint32_t kOfs6UdpChecksum = kOfs6UdpSrcPort + 6;

struct alignas(64) EncapTemplate6 {
  // The outer headers as sent, with flow label, payload length, source port,
  // UDP length and checksum zero (filled per packet).
  uint8_t outer[kOuterLen6] = {};
  uint8_t inner_dst[6] = {};  // the remote node's VTEP device MAC
  // One's complement sum (not folded, not inverted), as big-endian words, of
  // the UDP pseudo-header's addresses and next header, the UDP destination
  // port and the VXLAN header.
  uint32_t udp_sum = 0;
  bool valid = false;  // the next hop's MAC is known (else neighbor_unresolved)
  uint16_t tunnel = 0;
};

struct EncapParams6 {
  uint8_t src_mac[6];  // our uplink MAC
  uint8_t dst_mac[6];  // the next hop's MAC (zero if unresolved)
  uint8_t src_ip[16];  // our VTEP
  uint8_t dst_ip[16];  // the remote VTEP
  uint32_t vni = 0;    // host order
  uint8_t inner_dst[6];
  bool resolved = false;
  uint16_t tunnel = 0;
};

// Builds a template (control thread; pure).
EncapTemplate6 buildEncapTemplate6(const EncapParams6& p);

// The UDP checksum field for an inner frame of inner_len bytes whose own
// one's complement sum (folded, as big-endian words, not inverted) is
// inner_sum, sent from source port src_port. Never 0: a computed zero is
// sent as 0xffff (RFC 8200 section 8.1), zero meaning "no checksum".
inline uint16_t outerUdpChecksum6(const EncapTemplate6& t, uint32_t inner_len, uint16_t src_port, uint16_t inner_sum) {
  const uint32_t udp_len = kUdpLen + kVxlanLen + inner_len;
  // The length twice: in the pseudo-header and in the UDP header.
  uint64_t sum = uint64_t{t.udp_sum} + 2 * udp_len + src_port + inner_sum;
  while ((sum >> 16) != 0) sum = (sum & 0xffff) + (sum >> 16);
  const auto folded = static_cast<uint16_t>(~sum);
  return folded == 0 ? 0xffff : folded;
}

// Writes the outer headers for an inner frame of inner_len bytes (inner_sum
// as outerUdpChecksum6 takes it) at `out` (kOuterLen6 bytes). The flow
// label is the inner flow's hash (RFC 6438), so ECMP on the underlay spreads
// tunnels' flows as the source port does. Inline: once per packet.
inline void writeOuterHeaders6(const EncapTemplate6& t, uint32_t inner_len, uint32_t flow_hash, uint16_t inner_sum,
                               uint8_t* out) {
  std::memcpy(out, t.outer, kOuterLen6);
  const uint32_t label = flow_hash & 0xfffffu;
  out[kOfs6FlowLabel] = static_cast<uint8_t>(label >> 16);  // the traffic class's low nibble is zero
  encapStore16be(out + kOfs6FlowLabel + 1, label);
  const uint32_t udp_len = kUdpLen + kVxlanLen + inner_len;
  encapStore16be(out + kOfs6PayloadLen, udp_len);
  const uint16_t src_port = outerSourcePort(flow_hash);
  encapStore16be(out + kOfs6UdpSrcPort, src_port);
  encapStore16be(out + kOfs6UdpLen, udp_len);
  encapStore16be(out + kOfs6UdpChecksum, outerUdpChecksum6(t, inner_len, src_port, inner_sum));
}

}  // namespace sluice::vxlan
