// The external network on the uplink: pod traffic to destinations outside
// the cluster leaves the uplink toward one router (the external gateway),
// optionally in an 802.1Q VLAN, and that router's traffic to local pods
// comes back the same way. This file holds what the fast path needs: the
// snapshot part (the gateway's MAC, which control resolves by ARP and
// republishes, so a MAC change needs no re-translation of megaflows), the
// receive classification of an uplink frame that is neither VXLAN nor
// untagged ARP (pure, over bytes, for the fuzz target and unit tests), and
// the tag's push and pop (the transmit rewrite is uplink_stage.h's
// externalRewrite). PMD lcores only, except the pure functions.
#pragma once

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/drop_reason.h"

namespace sluice::vxlan {

// 802.1Q: the tag's EtherType (TPID) and its length.
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint32_t kVlanTagLen = 4;

// The external network as a PMD reads it (part of OverlaySnapshot). Written
// by control before publication, read-only afterwards.
struct ExternalSnapshot {
  bool enabled = false;      // external-gateway set
  bool resolved = false;     // gateway_mac known (else: drop as external_gateway_unresolved)
  uint16_t vlan = 0;         // 802.1Q VLAN ID, 0: untagged
  uint16_t max_frame = 0xffff;  // the uplink MTU + 14: the longest untagged frame sent (the decision's max_frame)
  rte_ether_addr gateway_mac{};  // the external gateway's MAC (Ethernet destination)
  rte_ether_addr uplink_mac{};   // our uplink's MAC (Ethernet source)
};

// What an uplink frame that is neither VXLAN for us nor untagged ARP is, for
// the external network.
enum class ExternalRx : uint8_t {
  kIpv4,    // an IPv4 frame of the external network: continue (after popping the tag)
  kArp,     // ARP in the external network's VLAN: the uplink's ARP handler decides (after popping the tag)
  kDrop,    // drop with the returned reason
};

struct ExternalRxInfo {
  ExternalRx cls = ExternalRx::kDrop;
  DropReason reason = DropReason::kUplinkNotVxlan;
  bool tagged = false;  // a 4-byte 802.1Q tag follows the MAC addresses (pop it)
};

// Classifies data[0, len): with vlan 0, an untagged IPv4 frame is the
// external network's (any tagged frame: external_wrong_vlan); with a VLAN,
// only frames tagged with exactly it (priority and DEI bits ignored) whose
// inner EtherType is IPv4 or ARP. Anything else keeps `untagged_reason`, the
// uplink stage's verdict for the frame. Pure; reads only data[0, len).
inline ExternalRxInfo classifyExternalFrame(const uint8_t* data, uint32_t len, uint16_t vlan,
                                            DropReason untagged_reason) {
  ExternalRxInfo r;
  r.reason = untagged_reason;
  if (len < 14) return r;
  const uint16_t eth_type = static_cast<uint16_t>(data[12] << 8 | data[13]);
  if (eth_type != kEtherTypeVlan) {
    if (vlan == 0 && eth_type == RTE_ETHER_TYPE_IPV4) r.cls = ExternalRx::kIpv4;
    else if (vlan != 0 && (eth_type == RTE_ETHER_TYPE_IPV4 || eth_type == RTE_ETHER_TYPE_ARP))
      r.reason = DropReason::kExternalWrongVlan;  // untagged, but the external network is tagged
    return r;
  }
  r.reason = DropReason::kExternalWrongVlan;
  if (vlan == 0 || len < 14 + kVlanTagLen) return r;
  const uint16_t tci = static_cast<uint16_t>(data[14] << 8 | data[15]);
  if ((tci & 0x0fff) != vlan) return r;
  const uint16_t inner_type = static_cast<uint16_t>(data[16] << 8 | data[17]);
  if (inner_type == RTE_ETHER_TYPE_IPV4) r.cls = ExternalRx::kIpv4;
  else if (inner_type == RTE_ETHER_TYPE_ARP) r.cls = ExternalRx::kArp;
  else return r;
  r.tagged = true;
  return r;
}

// Removes the 802.1Q tag after the MAC addresses (the first segment holds
// them: classifyExternalFrame read the tag there).
inline void popVlanTag(rte_mbuf* m) {
  auto* p = rte_pktmbuf_mtod(m, uint8_t*);
  std::memmove(p + kVlanTagLen, p, 2 * RTE_ETHER_ADDR_LEN);
  rte_pktmbuf_adj(m, kVlanTagLen);
}

// Inserts an 802.1Q tag with VLAN `vlan` (priority 0) after the MAC
// addresses; false when the first segment lacks the headroom.
inline bool pushVlanTag(rte_mbuf* m, uint16_t vlan) {
  if (rte_pktmbuf_headroom(m) < kVlanTagLen) return false;
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kVlanTagLen));
  std::memmove(p, p + kVlanTagLen, 2 * RTE_ETHER_ADDR_LEN);
  p[12] = static_cast<uint8_t>(kEtherTypeVlan >> 8);
  p[13] = static_cast<uint8_t>(kEtherTypeVlan & 0xff);
  p[14] = static_cast<uint8_t>(vlan >> 8);
  p[15] = static_cast<uint8_t>(vlan & 0xff);
  return true;
}

}  // namespace sluice::vxlan
