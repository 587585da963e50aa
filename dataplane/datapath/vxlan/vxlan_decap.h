// Classification and validation of one frame received on the uplink: VXLAN
// (RFC 7348) for this node, ARP, or something to drop with a named reason.
// A pure function over bytes (no mbuf, no DPDK), so the fuzz target and unit
// tests drive exactly what the PMD runs. Used on the PMD lcore polling the
// uplink, once per received frame; reads only data[0, len).
#pragma once

#include <cstdint>

#include "dataplane/datapath/drop_reason.h"

namespace sluice::vxlan {

// IANA-assigned VXLAN UDP port (RFC 7348 §5).
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

// Checks, in order: Ethernet length and type (ARP -> kArp; IPv4 only, no VLAN
// tag), outer IPv4 version/IHL (5..15, options allowed when received), total
// length, fragment bits (no fragments: reassembly is not done), destination
// (our VTEP), protocol UDP and destination port 4789, UDP length, VXLAN
// flags (exactly the I bit; RFC 7348's reserved bits must be zero when sent,
// and the kernel's VXLAN rejects other flags without extensions, so do we),
// VNI, room for an inner Ethernet header, and an inner frame that is not ARP
// (answering it would put an unencapsulated reply on the underlay). Outer checksums are not
// verified (the UDP one is zero by RFC 7348's recommendation; the IPv4 one
// is the NIC's business where it offers it).
DecapInfo classifyUplinkFrame(const uint8_t* data, uint32_t len, const DecapConfig& cfg);

}  // namespace sluice::vxlan
