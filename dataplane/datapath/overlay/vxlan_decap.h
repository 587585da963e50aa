// Classification and validation of one frame received on the uplink: VXLAN
// (RFC 7348) for this node, ARP, or something to drop with a named reason.
// A pure function over bytes (no mbuf, no DPDK), so the fuzz target and unit
// tests drive exactly what the PMD runs. Used on the PMD lcore polling the
// uplink, once per received frame; reads only data[0, len).
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/nd/neighbor_discovery.h"

namespace sluice::vxlan {

// IANA-assigned VXLAN UDP port.
inline constexpr uint16_t kVxlanUdpPort = 4789;
// Outer headers this node writes and expects: Ethernet (14, untagged), IPv4
// without options (20), UDP (8), VXLAN (8).
inline constexpr uint32_t kEthLen = 14;
inline constexpr uint32_t kIpv4Len = 20;
inline constexpr uint32_t kUdpLen = 8;
inline constexpr uint32_t kVxlanLen = 8;
inline constexpr uint32_t kOuterLen = kEthLen + kIpv4Len + kUdpLen + kVxlanLen;  // 50
// The VXLAN flags byte with only the I (valid VNI) bit set.
inline constexpr uint8_t kVxlanFlagI = 0x08;
// Largest valid VNI (24 bits); 0 is reserved here to mean "not tunnelled".
inline constexpr uint32_t kMaxVni = 0xffffff;

// What the uplink receives for: our VTEP address and the network's VNI.
struct DecapConfig {
  uint32_t vtep_ip_be = 0;  // network order
  uint32_t vni = 0;         // host order, 1..kMaxVni
};

enum class UplinkClass : uint8_t {
  kVxlan,  // decapsulate: inner frame at inner_ofs, tunnel fields filled
  kArp,    // an ARP frame (the uplink's ARP handler decides)
  kDrop,   // drop with `reason`
};

struct DecapInfo {
  UplinkClass cls = UplinkClass::kDrop;
  DropReason reason = DropReason::kTruncated;  // for kDrop
  uint16_t inner_ofs = 0;   // kVxlan: offset of the inner Ethernet header
  uint16_t inner_len = 0;   // kVxlan: inner frame length (bytes after it are outer padding)
  uint32_t vni = 0;         // kVxlan: host order
  uint32_t outer_src_be = 0;  // kVxlan: the sending VTEP (network order)
  uint32_t outer_dst_be = 0;  // kVxlan: our VTEP (network order)
};

// Helpers of classifyUplinkFrame (not an interface).
namespace decap_detail {

inline uint16_t load16be(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
inline uint32_t load32raw(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline DecapInfo drop(DropReason r) {
  DecapInfo d;
  d.cls = UplinkClass::kDrop;
  d.reason = r;
  return d;
}

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
inline constexpr uint8_t kProtoIcmpv6 = 58;
inline constexpr uint32_t kIpv6Len = 40;
inline constexpr uint8_t kProtoUdp = 17;
// IPv4 flags/fragment-offset word: MF bit and the 13-bit offset.
inline constexpr uint16_t kIpMoreFragments = 0x2000;
inline constexpr uint16_t kIpFragOffsetMask = 0x1fff;

// Whether the inner frame inner[0, len) (at least an Ethernet header, IPv6
// EtherType) carries neighbor discovery directly after its IPv6 header, as
// hosts send it (behind extension headers, the pipeline's screen stage
// drops it under the same reason).
inline bool isInnerNeighborDiscovery(const uint8_t* inner, uint32_t len) {
  if (len < kEthLen + kIpv6Len + 1) return false;
  return inner[kEthLen + 6] == kProtoIcmpv6 && isNeighborDiscoveryType(inner[kEthLen + kIpv6Len]);
}

}  // namespace decap_detail

// Checks, in order: Ethernet length and type (ARP -> kArp; IPv4 only, no VLAN
// tag), outer IPv4 version/IHL (5..15, options allowed when received), total
// length, fragment bits (no fragments: reassembly is not done), destination
// (our VTEP), protocol UDP and destination port 4789, UDP length, VXLAN
// flags (exactly the I bit; RFC 7348's reserved bits must be zero when sent,
// and the kernel's VXLAN rejects other flags without extensions, so do we),
// VNI, room for an inner Ethernet header, and an inner frame that is neither
// ARP nor IPv6 neighbor discovery (answering it would put an unencapsulated
// reply on the underlay). Outer checksums are not
// verified (the UDP one is zero by RFC 7348's recommendation; the IPv4 one
// is the NIC's business where it offers it).
// Inline: out of line, the 24-byte result went back through the stack and
// the caller's wide reload of it stalled on store forwarding, the uplink
// stage's hottest spot (perf annotate, decap at 1k flows).
// frame_len: the whole frame's length when data/len is only the first
// segment of a chained mbuf (0: len). Headers are read in the first
// segment only (one that does not hold them all: headers_split); the
// lengths they state are checked against the whole frame.
inline DecapInfo classifyUplinkFrame(const uint8_t* data, uint32_t len, const DecapConfig& cfg,
                                     uint32_t frame_len = 0) {
  using namespace decap_detail;
  const uint32_t whole = frame_len != 0 ? frame_len : len;
  if (len < kEthLen) return drop(DropReason::kVxlanTruncated);
  const uint16_t eth_type = load16be(data + 12);
  if (eth_type == kEtherTypeArp) {
    DecapInfo d;
    d.cls = UplinkClass::kArp;
    return d;
  }
  if (eth_type != kEtherTypeIpv4) return drop(DropReason::kUplinkNotVxlan);

  const uint8_t* ip = data + kEthLen;
  const uint32_t l3_avail = len - kEthLen;
  if (l3_avail < kIpv4Len) return drop(DropReason::kVxlanTruncated);
  const uint32_t ihl_bytes = (ip[0] & 0x0fu) * 4u;
  if ((ip[0] >> 4) != 4 || ihl_bytes < kIpv4Len) return drop(DropReason::kVxlanBadOuterIp);
  if (ihl_bytes > l3_avail) return drop(DropReason::kVxlanTruncated);
  const uint32_t total_len = load16be(ip + 2);
  if (total_len < ihl_bytes) return drop(DropReason::kVxlanBadOuterIp);
  if (total_len > whole - kEthLen) return drop(DropReason::kVxlanTruncated);
  // Contiguous, the length checks below keep every read within the frame.
  if (whole != len && kEthLen + ihl_bytes + kUdpLen + kVxlanLen + kEthLen + kIpv6Len + 1 > len) [[unlikely]]
    return drop(DropReason::kHeadersSplit);
  const uint16_t frag = load16be(ip + 6);
  if ((frag & (kIpMoreFragments | kIpFragOffsetMask)) != 0) return drop(DropReason::kVxlanFragment);
  const uint32_t dst_be = load32raw(ip + 16);
  if (dst_be != cfg.vtep_ip_be) return drop(DropReason::kVxlanWrongVtep);
  if (ip[9] != kProtoUdp) return drop(DropReason::kUplinkNotVxlan);

  // From here on only the IPv4 payload counts (Ethernet padding excluded).
  const uint8_t* udp = ip + ihl_bytes;
  const uint32_t l4_avail = total_len - ihl_bytes;
  if (l4_avail < kUdpLen) return drop(DropReason::kVxlanTruncated);
  if (load16be(udp + 2) != kVxlanUdpPort) return drop(DropReason::kUplinkNotVxlan);
  const uint32_t udp_len = load16be(udp + 4);
  if (udp_len < kUdpLen + kVxlanLen || udp_len > l4_avail) return drop(DropReason::kVxlanTruncated);

  const uint8_t* vx = udp + kUdpLen;
  // Flags byte exactly I; the 24 reserved bits after it are ignored on
  // receipt (the VXLAN standard: "MUST be ignored").
  if (vx[0] != kVxlanFlagI) return drop(DropReason::kVxlanBadFlags);
  const uint32_t vni = (uint32_t{vx[4]} << 16) | (uint32_t{vx[5]} << 8) | vx[6];
  if (vni != cfg.vni) return drop(DropReason::kVxlanUnknownVni);
  if (udp_len - kUdpLen - kVxlanLen < kEthLen) return drop(DropReason::kVxlanTruncated);
  // ARP inside the tunnel would be answered by the pod-side ARP stage and the
  // reply sent out unencapsulated: peers must route to our pods through our
  // gateway with a static neighbor entry (as flannel programs the kernel).
  // IPv6 neighbor discovery likewise (the same static entry for the IPv6
  // pod CIDR). IPv4 pays the one test it paid for ARP alone.
  const uint8_t* inner = vx + kVxlanLen;
  if (const uint16_t inner_type = load16be(inner + 12); inner_type != kEtherTypeIpv4) [[unlikely]] {
    if (inner_type == kEtherTypeArp) return drop(DropReason::kVxlanInnerArp);
    if (inner_type == kEtherTypeIpv6 && isInnerNeighborDiscovery(inner, udp_len - kUdpLen - kVxlanLen))
      return drop(DropReason::kVxlanInnerNd);
  }

  DecapInfo d;
  d.cls = UplinkClass::kVxlan;
  d.inner_ofs = static_cast<uint16_t>(kEthLen + ihl_bytes + kUdpLen + kVxlanLen);
  d.inner_len = static_cast<uint16_t>(udp_len - kUdpLen - kVxlanLen);
  d.vni = vni;
  d.outer_src_be = load32raw(ip + 12);
  d.outer_dst_be = dst_be;
  return d;
}

}  // namespace sluice::vxlan
