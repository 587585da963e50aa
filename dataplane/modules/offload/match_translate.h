// Translation of a megaflow's match (masked key + mask, flow/flow_key.h) into
// an rte_flow pattern for partial offload. Complete or not at all: a match
// with any field the pattern cannot express exactly is refused with a named
// reason (counted by the offload thread), because a rule that matched more
// than its megaflow would mark packets the megaflow does not cover, and the
// PMD would give them the wrong actions. Control path (offload thread).
#pragma once

#include <cstdint>
#include <string_view>

#include "dataplane/modules/offload/flow_pattern.h"
#include "dataplane/datapath/flow/flow_key.h"

namespace sluice::offload {

// What a provider can express beyond exact/masked header fields.
struct ProviderCaps {
  bool ttl_range = false;  // IPv4 TTL / IPv6 hop limit as spec..last (TTL class "2+")
  bool ipv6 = false;
  // VXLAN decap patterns: outer ETH / IPV4 (version_ihl, src, dst, proto) /
  // UDP dst 4789 / VXLAN (flags, VNI) / inner ETH / IP [/ L4].
  bool tunnel = false;
  // The outer IPv4 fragment bits (fragment_offset under mask 0x3fff), so a
  // tunnel rule marks no fragment. Without it the rule is looser; the PMD's
  // decap guard (mark_branch.h) sends marked fragments to the normal path.
  bool ipv4_frag = false;
};

// Refusal reasons, stable snake_case names (stats and logs).
inline constexpr std::string_view kRefuseInPort = "in_port";          // matches another in-port
inline constexpr std::string_view kRefuseNotIp = "not_ip";            // EtherType absent or not IPv4/IPv6
inline constexpr std::string_view kRefuseVlan = "vlan";
inline constexpr std::string_view kRefuseArp = "arp";
inline constexpr std::string_view kRefuseFrag = "ip_frag";
inline constexpr std::string_view kRefuseTtl = "ttl";                 // class not expressible
inline constexpr std::string_view kRefuseTtlRange = "ttl_range";      // provider has no ranges
inline constexpr std::string_view kRefuseIpv6 = "ipv6";
inline constexpr std::string_view kRefuseL4 = "l4_proto";             // ports without TCP/UDP
inline constexpr std::string_view kRefuseIcmp = "icmp";
inline constexpr std::string_view kRefuseTunnel = "tunnel";
inline constexpr std::string_view kRefuseTos = "tos";
inline constexpr std::string_view kRefuseOther = "unknown_field";

struct MatchTranslation {
  bool ok = false;
  std::string_view refusal;  // when !ok
  FlowPattern pattern;       // when ok
};

// `offload_in_port`: the Sluice port the rule is installed on (a mask on
// in_port is fine when it names exactly that port: the rule is per port).
//
// A tunnelled megaflow (masked_key.tun_vni != 0: its packets came
// decapsulated from the uplink) becomes a VXLAN pattern. The caller keeps
// tun_dst and tun_vni of the upcall in the key even where the megaflow's mask
// leaves them out: the uplink stage decapsulates only frames to our VTEP with
// our VNI, so every packet of the megaflow has those values and a rule on
// them matches a subset of it, never more. The outer IPv4 header is matched
// as version 4 without options (version_ihl 0x45), so the PMD can pop a fixed
// 50-byte outer header. A tunnelled IPv6 megaflow is refused (tunnel): the
// PMD's decap branch serves inner IPv4 only. Encap megaflows, either family,
// are never offered (the offload thread offloads output and drop actions).
MatchTranslation translateMatch(const flow::FlowKey& masked_key, const flow::FlowMask& mask,
                                uint16_t offload_in_port, const ProviderCaps& caps);

}  // namespace sluice::offload
