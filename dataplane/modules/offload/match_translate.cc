// Megaflow match -> rte_flow pattern (see match_translate.h). Control path.
#include "dataplane/modules/offload/match_translate.h"

#include <rte_ether.h>
#include <rte_ip.h>

#include <cstring>

#include "dataplane/datapath/overlay/vxlan_decap.h"

namespace sluice::offload {
namespace {

using flow::FlowKey;
using flow::FlowMask;

MatchTranslation refuse(std::string_view why) {
  MatchTranslation t;
  t.refusal = why;
  return t;
}

bool anyBytes(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return true;
  return false;
}

// TTL class -> [lo, hi] of the 8-bit TTL / hop limit.
bool ttlRange(uint8_t ttl_class, uint8_t* lo, uint8_t* hi) {
  switch (static_cast<flow::TtlClass>(ttl_class)) {
    case flow::TtlClass::kZero: *lo = *hi = 0; return true;
    case flow::TtlClass::kOne: *lo = *hi = 1; return true;
    case flow::TtlClass::kMany: *lo = 2; *hi = 255; return true;
    default: return false;
  }
}

// IPv4 version 4, IHL 5 (20 bytes, no options).
constexpr uint8_t kVersionIhl45 = 0x45;
// The MF bit and the 13-bit fragment offset of fragment_offset.
constexpr uint16_t kFragBits = 0x3fff;

// Outer ETH / IPV4 / UDP / VXLAN of a decap megaflow (see match_translate.h).
void addVxlanOuter(const FlowKey& k, const FlowMask& m, const ProviderCaps& caps, FlowPattern& p) {
  PatternItem& eth = p.add(RTE_FLOW_ITEM_TYPE_ETH);
  eth.spec.eth.hdr.ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
  eth.mask.eth.hdr.ether_type = 0xffff;
  eth.spec.eth.has_vlan = 0;
  eth.mask.eth.has_vlan = 1;
  PatternItem& ip = p.add(RTE_FLOW_ITEM_TYPE_IPV4);
  ip.spec.ipv4.hdr.version_ihl = kVersionIhl45;
  ip.mask.ipv4.hdr.version_ihl = 0xff;
  ip.spec.ipv4.hdr.src_addr = k.tun_src & m.tun_src;
  ip.mask.ipv4.hdr.src_addr = m.tun_src;
  ip.spec.ipv4.hdr.dst_addr = k.tun_dst;  // our VTEP (see the header)
  ip.mask.ipv4.hdr.dst_addr = 0xffffffffU;
  ip.spec.ipv4.hdr.next_proto_id = IPPROTO_UDP;
  ip.mask.ipv4.hdr.next_proto_id = 0xff;
  if (caps.ipv4_frag) {
    ip.spec.ipv4.hdr.fragment_offset = 0;
    ip.mask.ipv4.hdr.fragment_offset = rte_cpu_to_be_16(kFragBits);
  }
  PatternItem& udp = p.add(RTE_FLOW_ITEM_TYPE_UDP);
  udp.spec.udp.hdr.dst_port = rte_cpu_to_be_16(vxlan::kVxlanUdpPort);
  udp.mask.udp.hdr.dst_port = 0xffff;
  PatternItem& vx = p.add(RTE_FLOW_ITEM_TYPE_VXLAN);
  vx.spec.vxlan.flags = vxlan::kVxlanFlagI;  // what the uplink stage accepts
  vx.mask.vxlan.flags = 0xff;
  vx.spec.vxlan.vni[0] = static_cast<uint8_t>(k.tun_vni >> 16);
  vx.spec.vxlan.vni[1] = static_cast<uint8_t>(k.tun_vni >> 8);
  vx.spec.vxlan.vni[2] = static_cast<uint8_t>(k.tun_vni);
  vx.mask.vxlan.vni[0] = vx.mask.vxlan.vni[1] = vx.mask.vxlan.vni[2] = 0xff;
}

}  // namespace

MatchTranslation translateMatch(const FlowKey& k, const FlowMask& m, uint16_t offload_in_port,
                                const ProviderCaps& caps) {
  if (m.in_port != 0 && (m.in_port != 0xffff || k.in_port != offload_in_port)) return refuse(kRefuseInPort);
  if (m.vlan_tci != 0 || (m.flags & flow::kFlagVlan) != 0) return refuse(kRefuseVlan);
  if ((m.flags & ~flow::kFlagVlan) != 0) return refuse(kRefuseOther);
  if (m.arp_op != 0 || anyBytes(m.arp_sha, 6) || m.arp_spa != 0 || m.arp_tpa != 0) return refuse(kRefuseArp);
  if (m.ip_frag != 0) return refuse(kRefuseFrag);
  // tun_vni under the mask with a zero key means "not tunnelled" (every
  // packet on a port other than an overlay uplink): nothing to match.
  const bool tunneled = k.tun_vni != 0;
  if (!tunneled && (m.tun_src != 0 || m.tun_dst != 0)) return refuse(kRefuseTunnel);
  if (tunneled && (!caps.tunnel || k.tun_dst == 0 || k.tun_vni > 0xffffff)) return refuse(kRefuseTunnel);
  if (m.reserved != 0 || m.pad0 != 0 || m.pad1 != 0 || m.pad2 != 0) return refuse(kRefuseOther);
  // Only IP: the PMD answers ARP and drops the rest before any lookup, so a
  // rule for anything else would take packets away from that screening.
  if (m.eth_type != 0xffff) return refuse(kRefuseNotIp);
  const bool v4 = k.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV4);
  const bool v6 = k.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV6);
  if (!v4 && !v6) return refuse(kRefuseNotIp);
  if (v6 && !caps.ipv6) return refuse(kRefuseIpv6);
  // The PMD's decap branch pops and rewrites inner IPv4 only (mark_branch.h's
  // guard): a rule for decapsulated IPv6 would mark packets it sends back
  // to the normal path every time, so such megaflows are not offloaded.
  if (v6 && tunneled) return refuse(kRefuseTunnel);
  if (v4 && (anyBytes(m.ipv6_src, 16) || anyBytes(m.ipv6_dst, 16))) return refuse(kRefuseOther);
  if (v6 && (m.ipv4_src != 0 || m.ipv4_dst != 0)) return refuse(kRefuseOther);
  if (m.ttl_class != 0 && m.ttl_class != 0xff) return refuse(kRefuseTtl);
  uint8_t ttl_lo = 0, ttl_hi = 0;
  if (m.ttl_class != 0) {
    if (!ttlRange(k.ttl_class, &ttl_lo, &ttl_hi)) return refuse(kRefuseTtl);
    if (ttl_lo != ttl_hi && !caps.ttl_range) return refuse(kRefuseTtlRange);
  }
  const bool ports = m.tp_src != 0 || m.tp_dst != 0;
  const bool icmp = m.icmp_type != 0 || m.icmp_code != 0;
  if (ports && (m.ip_proto != 0xff || (k.ip_proto != IPPROTO_TCP && k.ip_proto != IPPROTO_UDP)))
    return refuse(kRefuseL4);
  if (icmp && (m.ip_proto != 0xff || k.ip_proto != IPPROTO_ICMP || !v4)) return refuse(kRefuseIcmp);
  if (m.ip_tos != 0 && v6) return refuse(kRefuseTos);

  MatchTranslation t;
  FlowPattern& p = t.pattern;
  if (tunneled) addVxlanOuter(k, m, caps, p);
  PatternItem& eth = p.add(RTE_FLOW_ITEM_TYPE_ETH);
  eth.spec.eth.hdr.ether_type = k.eth_type;
  eth.mask.eth.hdr.ether_type = 0xffff;
  // Untagged only: the PMD routes untagged frames (tagged ones are dropped).
  eth.spec.eth.has_vlan = 0;
  eth.mask.eth.has_vlan = 1;
  std::memcpy(eth.spec.eth.hdr.dst_addr.addr_bytes, k.eth_dst, 6);
  std::memcpy(eth.mask.eth.hdr.dst_addr.addr_bytes, m.eth_dst, 6);
  std::memcpy(eth.spec.eth.hdr.src_addr.addr_bytes, k.eth_src, 6);
  std::memcpy(eth.mask.eth.hdr.src_addr.addr_bytes, m.eth_src, 6);

  if (v4) {
    PatternItem& ip = p.add(RTE_FLOW_ITEM_TYPE_IPV4);
    ip.spec.ipv4.hdr.src_addr = k.ipv4_src;
    ip.mask.ipv4.hdr.src_addr = m.ipv4_src;
    ip.spec.ipv4.hdr.dst_addr = k.ipv4_dst;
    ip.mask.ipv4.hdr.dst_addr = m.ipv4_dst;
    ip.spec.ipv4.hdr.next_proto_id = k.ip_proto;
    ip.mask.ipv4.hdr.next_proto_id = m.ip_proto;
    ip.spec.ipv4.hdr.type_of_service = k.ip_tos;
    ip.mask.ipv4.hdr.type_of_service = m.ip_tos;
    if (m.ttl_class != 0) {
      ip.spec.ipv4.hdr.time_to_live = ttl_lo;
      ip.mask.ipv4.hdr.time_to_live = 0xff;
      if (ttl_lo != ttl_hi) {
        ip.last = ip.spec;
        ip.last.ipv4.hdr.time_to_live = ttl_hi;
        ip.has_last = true;
      }
    }
  } else {
    PatternItem& ip = p.add(RTE_FLOW_ITEM_TYPE_IPV6);
    std::memcpy(ip.spec.ipv6.hdr.src_addr, k.ipv6_src, 16);
    std::memcpy(ip.mask.ipv6.hdr.src_addr, m.ipv6_src, 16);
    std::memcpy(ip.spec.ipv6.hdr.dst_addr, k.ipv6_dst, 16);
    std::memcpy(ip.mask.ipv6.hdr.dst_addr, m.ipv6_dst, 16);
    ip.spec.ipv6.hdr.proto = k.ip_proto;
    ip.mask.ipv6.hdr.proto = m.ip_proto;
    if (m.ttl_class != 0) {
      ip.spec.ipv6.hdr.hop_limits = ttl_lo;
      ip.mask.ipv6.hdr.hop_limits = 0xff;
      if (ttl_lo != ttl_hi) {
        ip.last = ip.spec;
        ip.last.ipv6.hdr.hop_limits = ttl_hi;
        ip.has_last = true;
      }
    }
  }
  if (ports) {
    if (k.ip_proto == IPPROTO_UDP) {
      PatternItem& l4 = p.add(RTE_FLOW_ITEM_TYPE_UDP);
      l4.spec.udp.hdr.src_port = k.tp_src;
      l4.mask.udp.hdr.src_port = m.tp_src;
      l4.spec.udp.hdr.dst_port = k.tp_dst;
      l4.mask.udp.hdr.dst_port = m.tp_dst;
    } else {
      PatternItem& l4 = p.add(RTE_FLOW_ITEM_TYPE_TCP);
      l4.spec.tcp.hdr.src_port = k.tp_src;
      l4.mask.tcp.hdr.src_port = m.tp_src;
      l4.spec.tcp.hdr.dst_port = k.tp_dst;
      l4.mask.tcp.hdr.dst_port = m.tp_dst;
    }
  } else if (icmp) {
    PatternItem& l4 = p.add(RTE_FLOW_ITEM_TYPE_ICMP);
    l4.spec.icmp.hdr.icmp_type = k.icmp_type;
    l4.mask.icmp.hdr.icmp_type = m.icmp_type;
    l4.spec.icmp.hdr.icmp_code = k.icmp_code;
    l4.mask.icmp.hdr.icmp_code = m.icmp_code;
  }
  t.ok = true;
  return t;
}

}  // namespace sluice::offload
