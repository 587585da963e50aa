// Classification of one frame received on an IPv6 underlay's uplink: VXLAN
// over outer IPv6 for this node, neighbor discovery (our VTEP's solicitations
// and the advertisements answering ours), or a named drop. The IPv6 twin of
// classifyUplinkFrame (vxlan_decap.h), chosen once per burst by the node's
// underlay family, so an IPv4 underlay pays nothing for it. Pure over bytes,
// as that one is, for the fuzz target and unit tests. PMD lcore polling the
// uplink; reads only data[0, len).
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/overlay/vxlan_decap.h"

namespace sluice::vxlan {

// Outer headers an IPv6 VTEP writes: Ethernet 14, IPv6 40, UDP 8, VXLAN 8.
inline constexpr uint32_t kOuterLen6 = kEthLen + decap_detail::kIpv6Len + kUdpLen + kVxlanLen;  // 70

struct DecapConfig6 {
  uint8_t vtep[16] = {};  // our VTEP, network order
  uint32_t vni = 0;       // host order, 1..kMaxVni
};

enum class UplinkClass6 : uint8_t {
  kVxlan,  // decapsulate: inner frame at inner_ofs; the UDP checksum is the caller's to verify
  kNd,     // ICMPv6 neighbor discovery directly after the IPv6 header
  kDrop,   // drop with `reason`
};

struct DecapInfo6 {
  UplinkClass6 cls = UplinkClass6::kDrop;
  DropReason reason = DropReason::kVxlanTruncated;  // for kDrop
  uint16_t inner_ofs = 0;   // kVxlan: offset of the inner Ethernet header
  uint16_t inner_len = 0;   // kVxlan: inner frame length
  uint16_t udp_len = 0;     // kVxlan: UDP header + payload (what the checksum covers)
  bool udp_checksummed = false;  // kVxlan: the UDP checksum field is nonzero
  uint32_t vni = 0;         // kVxlan: host order
  const uint8_t* outer_src = nullptr;  // kVxlan: the sending VTEP (16 bytes inside data)
};

// Checks, in order: Ethernet length and type (IPv6 only, no VLAN tag; ARP has
// no business on an IPv6 underlay), IPv6 version, payload length inside the
// frame, next header (UDP; ICMPv6 carrying ND -> kNd, the ND handler checks
// the rest; a fragment header -> vxlan_fragment; other extension headers ->
// vxlan_outer_extension: a VTEP never sends them and they are not walked),
// destination (our VTEP), UDP destination port 4789 and length, then what
// the IPv4 classifier checks of VXLAN and the inner frame.
inline DecapInfo6 classifyUplinkFrame6(const uint8_t* data, uint32_t len, const DecapConfig6& cfg) {
  using namespace decap_detail;
  DecapInfo6 d;
  auto drop6 = [&d](DropReason r) {
    d.cls = UplinkClass6::kDrop;
    d.reason = r;
    return d;
  };
  if (len < kEthLen) return drop6(DropReason::kVxlanTruncated);
  if (load16be(data + 12) != kEtherTypeIpv6) return drop6(DropReason::kUplinkNotVxlan);
  const uint8_t* ip = data + kEthLen;
  if (len - kEthLen < kIpv6Len) return drop6(DropReason::kVxlanTruncated);
  if ((ip[0] >> 4) != 6) return drop6(DropReason::kVxlanBadOuterIp);
  const uint32_t payload = load16be(ip + 4);
  if (payload > len - kEthLen - kIpv6Len) return drop6(DropReason::kVxlanTruncated);
  const uint8_t next = ip[6];
  if (next == kProtoIcmpv6) {
    if (payload >= 1 && isNeighborDiscoveryType(ip[kIpv6Len])) {
      d.cls = UplinkClass6::kNd;
      return d;
    }
    return drop6(DropReason::kUplinkNotVxlan);
  }
  if (next != kProtoUdp) {
    constexpr uint8_t kFragmentHeader = 44;
    // Hop-by-hop, routing, destination options, AH, ESP... and anything
    // else not UDP: a VTEP sends plain UDP.
    if (next == kFragmentHeader) return drop6(DropReason::kVxlanFragment);
    constexpr uint8_t kHopByHop = 0, kRouting = 43, kEsp = 50, kAh = 51, kDestOpts = 60;
    if (next == kHopByHop || next == kRouting || next == kEsp || next == kAh || next == kDestOpts)
      return drop6(DropReason::kVxlanOuterExtension);
    return drop6(DropReason::kUplinkNotVxlan);
  }
  if (std::memcmp(ip + 24, cfg.vtep, 16) != 0) return drop6(DropReason::kVxlanWrongVtep);

  const uint8_t* udp = ip + kIpv6Len;
  if (payload < kUdpLen) return drop6(DropReason::kVxlanTruncated);
  if (load16be(udp + 2) != kVxlanUdpPort) return drop6(DropReason::kUplinkNotVxlan);
  const uint32_t udp_len = load16be(udp + 4);
  if (udp_len < kUdpLen + kVxlanLen || udp_len > payload) return drop6(DropReason::kVxlanTruncated);

  const uint8_t* vx = udp + kUdpLen;
  if (vx[0] != kVxlanFlagI) return drop6(DropReason::kVxlanBadFlags);
  const uint32_t vni = (uint32_t{vx[4]} << 16) | (uint32_t{vx[5]} << 8) | vx[6];
  if (vni != cfg.vni) return drop6(DropReason::kVxlanUnknownVni);
  const uint32_t inner_len = udp_len - kUdpLen - kVxlanLen;
  if (inner_len < kEthLen) return drop6(DropReason::kVxlanTruncated);
  // As over IPv4: no ARP or ND inside the tunnel (see classifyUplinkFrame).
  const uint8_t* inner = vx + kVxlanLen;
  if (const uint16_t inner_type = load16be(inner + 12); inner_type != kEtherTypeIpv4) {
    if (inner_type == kEtherTypeArp) return drop6(DropReason::kVxlanInnerArp);
    if (inner_type == kEtherTypeIpv6 && isInnerNeighborDiscovery(inner, inner_len))
      return drop6(DropReason::kVxlanInnerNd);
  }
  d.cls = UplinkClass6::kVxlan;
  d.inner_ofs = static_cast<uint16_t>(kOuterLen6);
  d.inner_len = static_cast<uint16_t>(inner_len);
  d.udp_len = static_cast<uint16_t>(udp_len);
  d.udp_checksummed = load16be(udp + 6) != 0;
  d.vni = vni;
  d.outer_src = ip + 8;
  return d;
}

}  // namespace sluice::vxlan
