// Translation of a megaflow's match (masked key + mask, flow/flow_key.h) into
// an rte_flow pattern for partial offload. Complete or not at all: a match
// with any field the pattern cannot express exactly is refused with a named
// reason (counted by the offload thread), because a rule that matched more
// than its megaflow would mark packets the megaflow does not cover, and the
// PMD would give them the wrong actions. Control path (offload thread).
#pragma once

#include <cstdint>
#include <string_view>

#include "dataplane/control/offload/flow_pattern.h"
#include "dataplane/datapath/flow/flow_key.h"

namespace sluice::offload {

// What a provider can express beyond exact/masked header fields.
struct ProviderCaps {
  bool ttl_range = false;  // IPv4 TTL / IPv6 hop limit as spec..last (TTL class "2+")
  bool ipv6 = false;
  // VXLAN VNI and outer addresses with inner headers. Also needs the PMD's
  // mark branch to decapsulate, which it does not yet: off for every provider.
  bool tunnel = false;
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
MatchTranslation translateMatch(const flow::FlowKey& masked_key, const flow::FlowMask& mask,
                                uint16_t offload_in_port, const ProviderCaps& caps);

}  // namespace sluice::offload
