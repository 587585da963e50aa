// The L3 decision (l3_forward.cc), recording which key fields it reads.
#include "dataplane/datapath/flow_translate.h"

#include <rte_byteorder.h>
#include <rte_ether.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "dataplane/datapath/external_decision.h"

namespace sluice {
namespace {

// Protocol numbers and echo request types (RFC 792, RFC 4443 4.1).
constexpr uint8_t kIpProtoIcmp = 1;
constexpr uint8_t kIpProtoTcp = 6;
constexpr uint8_t kIpProtoUdp = 17;
constexpr uint8_t kIpProtoIcmpv6 = 58;
constexpr uint8_t kIcmpEchoRequest = 8;
constexpr uint8_t kIcmpv6EchoRequest = 128;

// The shortest destination prefix, in whole octets, around dst_be that holds
// none of the addresses a decision must tell apart from dst: the pods and the
// gateway, and (with `routes`) every remote pod CIDR that does not contain
// dst. At least `at_least` bits. Every destination in that prefix is decided
// as dst is, so its megaflow may match the whole prefix: traffic to random
// addresses then makes a few hundred megaflows, not one per address.
// Whole octets keep the number of distinct masks (classifier subtables) at
// four per kind of decision; a longer prefix than needed is never wrong.
uint32_t destinationPrefix(const RouteTables& tables, uint32_t dst_be, bool routes, uint32_t at_least) {
  const uint32_t dst = rte_be_to_cpu_32(dst_be);
  uint32_t bits = at_least;
  // An address that differs from dst first at bit d (from the top) is
  // outside dst's prefix of d + 1 bits.
  auto exclude = [&](uint32_t net_be, uint32_t len) {
    const uint32_t diff = dst ^ rte_be_to_cpu_32(net_be);
    const auto d = static_cast<uint32_t>(std::countl_zero(diff));
    if (d < len) bits = std::max(bits, d + 1);  // d >= len: dst is inside (a route that contains it)
  };
  exclude(tables.gateway_ip_be, 32);
  if (tables.host != nullptr && tables.host->enabled && tables.host->has_ipv4) exclude(tables.host->ipv4_be, 32);
  if (tables.fib != nullptr)
    for (uint32_t pod : tables.fib->addresses()) exclude(pod, 32);
  // A local pod's routed prefix decides apart whether tunnelled or not.
  if (tables.prefixes != nullptr)
    for (const RoutedPrefix& p : tables.prefixes->v4()) exclude(p.net_be, static_cast<uint32_t>(std::popcount(p.mask_be)));
  if (routes && tables.overlay != nullptr)
    for (const vxlan::RemoteRoute& r : tables.overlay->routes())
      exclude(r.net_be, static_cast<uint32_t>(std::popcount(r.mask_be)));
  return std::min<uint32_t>(32, (bits + 7) / 8 * 8);
}

// The shortest whole-octet prefix around dst_be that does not hold a_be
// (32 when they are equal).
uint32_t prefixExcluding(uint32_t dst_be, uint32_t a_be) {
  const auto d = static_cast<uint32_t>(std::countl_zero(rte_be_to_cpu_32(dst_be ^ a_be)));
  return std::min<uint32_t>(32, (d + 1 + 7) / 8 * 8);
}

uint32_t prefixMaskBe(uint32_t bits) {
  return bits == 0 ? 0 : rte_cpu_to_be_32(~uint32_t{0} << (32 - bits));
}

// The first bit (from the top) where two byte strings of `len` bytes (IPv6
// addresses by default) differ; len * 8 if equal.
uint32_t firstDifference(const uint8_t* a, const uint8_t* b, uint32_t len = 16) {
  for (uint32_t i = 0; i < len; ++i)
    if (const auto x = static_cast<uint8_t>(a[i] ^ b[i]); x != 0)
      return i * 8 + static_cast<uint32_t>(std::countl_zero(x));
  return len * 8;
}

// Sets the first `octets` bytes of a byte-string mask of `len` bytes.
void setOctetMask(uint8_t* mask, uint32_t len, uint32_t octets) {
  for (uint32_t i = 0; i < len; ++i) mask[i] = i < octets ? 0xff : 0x00;
}

// Whole octets holding the first `bits` bits.
uint32_t octetsFor(uint32_t bits) { return (bits + 7) / 8; }

// The source check of a port whose sources are checked (source_check.h).
// An allowed source is matched exactly; a spoofed one only in the leading
// octets that differ from every allowed value, which every address decided
// alike shares: random spoofed sources then make at most a few hundred
// megaflows per port, not one per address, and whole octets keep the
// number of masks small. Returns false with the drop in `out`.
// A checked port may also send from inside its routed prefixes: a source in
// one is matched as that prefix (in whole octets, so the matched range lies
// inside it), and a spoofed one in the octets that tell it from them too.
bool sourcesAllowed(const PortSources& s, const RoutedPrefixTable* prefixes, const flow::FlowKey& key,
                    FlowTranslation& out) {
  const uint32_t mac_diff = firstDifference(key.eth_src, s.mac, 6);
  if (mac_diff < 48) {
    setOctetMask(out.mask.eth_src, 6, octetsFor(mac_diff + 1));
    out.actions = dropAction(DropReason::kSpoofedSourceMac);
    return false;
  }
  setOctetMask(out.mask.eth_src, 6, 6);
  if (key.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
    const uint32_t ll_diff = firstDifference(key.ipv6_src, s.link_local);
    const uint32_t own_diff = s.has_ipv6 ? firstDifference(key.ipv6_src, s.ipv6) : 0;
    if (ll_diff == 128 || own_diff == 128) {
      setOctetMask(out.mask.ipv6_src, 16, 16);
      return true;
    }
    // Until its address is its own (duplicate address detection), a host
    // reports the groups it listens to (MLD) from ::, to ff02::16 or the
    // group: link-scope multicast, which a router never forwards. Not a
    // spoof: dropped as what it is, unrouted, which the mask keeps to
    // exactly :: toward ff02::/16.
    static constexpr uint8_t kUnspecified[16] = {};
    if (std::memcmp(key.ipv6_src, kUnspecified, 16) == 0 && key.ipv6_dst[0] == 0xff && key.ipv6_dst[1] == 0x02) {
      setOctetMask(out.mask.ipv6_src, 16, 16);
      setOctetMask(out.mask.ipv6_dst, 16, 2);
      out.actions = dropAction(DropReason::kNoRoute);
      return false;
    }
    uint32_t differs_at = std::max(ll_diff, own_diff);
    if (prefixes != nullptr)
      for (const RoutedPrefix6& p : prefixes->v6()) {
        if (p.port_no != key.in_port) continue;
        const uint32_t d = firstDifference(key.ipv6_src, p.net.data());
        if (d >= p.prefix_len) {
          setOctetMask(out.mask.ipv6_src, 16, octetsFor(p.prefix_len));
          return true;
        }
        differs_at = std::max(differs_at, d);
      }
    setOctetMask(out.mask.ipv6_src, 16, octetsFor(differs_at + 1));
    out.actions = dropAction(DropReason::kSpoofedSourceIp);
    return false;
  }
  bool has_v4_prefix = false;
  if (prefixes != nullptr)
    for (const RoutedPrefix& p : prefixes->v4()) has_v4_prefix |= p.port_no == key.in_port;
  if (!s.has_ipv4 && !has_v4_prefix) {
    // An IPv6-only pod owns no IPv4 address: whatever the source, spoofed.
    out.actions = dropAction(DropReason::kSpoofedSourceIp);
    return false;
  }
  uint8_t src[4], own[4];
  std::memcpy(src, &key.ipv4_src, 4);
  std::memcpy(own, &s.ipv4_be, 4);
  // Without an address of its own, every source differs from it at bit 0.
  uint32_t ip_diff = s.has_ipv4 ? firstDifference(src, own, 4) : 0;
  bool allowed = ip_diff == 32;
  uint32_t octets = 4;
  for (size_t i = 0; !allowed && has_v4_prefix && i < prefixes->v4().size(); ++i) {
    const RoutedPrefix& p = prefixes->v4()[i];
    if (p.port_no != key.in_port) continue;
    uint8_t net[4];
    std::memcpy(net, &p.net_be, 4);
    const uint32_t len = static_cast<uint32_t>(std::popcount(p.mask_be));
    const uint32_t d = firstDifference(src, net, 4);
    if (d >= len) {
      allowed = true;
      octets = octetsFor(len);
    } else {
      ip_diff = std::max(ip_diff, d);
    }
  }
  uint8_t mask[4];
  setOctetMask(mask, 4, allowed ? octets : octetsFor(ip_diff + 1));
  std::memcpy(&out.mask.ipv4_src, mask, 4);
  if (allowed) return true;
  out.actions = dropAction(DropReason::kSpoofedSourceIp);
  return false;
}

// destinationPrefix for IPv6: the shortest whole-octet prefix around dst
// holding neither a pod nor a gateway address, nor (with `routes`) a remote
// node's IPv6 pod CIDR that does not contain dst. At least `at_least` bits.
uint32_t destinationPrefix6(const RouteTables& tables, const uint8_t* dst, bool routes, uint32_t at_least) {
  uint32_t bits = at_least;
  auto exclude = [&](const uint8_t* net, uint32_t len) {
    const uint32_t d = firstDifference(dst, net);
    if (d < len) bits = std::max(bits, d + 1);
  };
  if (tables.v6 != nullptr && tables.v6->enabled) {
    exclude(tables.v6->gateway, 128);
    exclude(tables.v6->gateway_link_local, 128);
  }
  if (tables.host != nullptr && tables.host->enabled && tables.host->has_ipv6) exclude(tables.host->ipv6, 128);
  if (tables.fib6 != nullptr)
    for (const Ipv6Address& pod : tables.fib6->addresses()) exclude(pod.bytes.data(), 128);
  if (tables.prefixes != nullptr)
    for (const RoutedPrefix6& p : tables.prefixes->v6()) exclude(p.net.data(), p.prefix_len);
  if (routes && tables.overlay != nullptr)
    for (const vxlan::RemoteRoute6& r : tables.overlay->routes6()) exclude(r.net.data(), r.prefix_len);
  return std::min<uint32_t>(128, (bits + 7) / 8 * 8);
}

void setPrefixMask6(uint8_t* mask, uint32_t bits) {
  for (uint32_t i = 0; i < 16; ++i) {
    const uint32_t take = bits >= 8 ? 8 : bits;
    mask[i] = static_cast<uint8_t>(0xff00U >> take);
    bits -= take;
  }
}

// Whether a tunnelled packet's inner source belongs to the node that sent
// it (strict reverse-path filtering, as Calico applies to its VXLAN
// device): the longest remote route holding the source must lead back into
// `tunnel`. A local pod's address, this node's own or another node's CIDR
// are none of the sender's, and VXLAN carries no authentication beyond the
// outer source it names. The source is matched as the widest whole-octet
// prefix in which every address decides alike: the sender's CIDR or prefix
// itself when it is octet-aligned (a /24 pod CIDR: one megaflow per sender
// CIDR and destination, not per remote pod), narrowed only where another
// route lies inside it. Writes the source mask; true when refused (`out`
// holds the drop).
bool spoofedInnerSource(const vxlan::OverlayTables& overlay, uint16_t tunnel, const flow::FlowKey& key,
                        FlowTranslation& out) {
  bool refused = false;
  if (key.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
    const uint8_t* src = key.ipv6_src;
    const vxlan::RemoteRoute6* r = overlay.longestMatch6(src);
    uint32_t bits = r != nullptr ? r->prefix_len : 1;
    for (const vxlan::RemoteRoute6& other : overlay.routes6())
      if (const uint32_t d = firstDifference(src, other.net.data()); d < other.prefix_len) bits = std::max(bits, d + 1);
    setOctetMask(out.mask.ipv6_src, 16, octetsFor(bits));
    refused = r == nullptr || r->tunnel != tunnel;
  } else {
    const uint32_t src = rte_be_to_cpu_32(key.ipv4_src);
    const vxlan::RemoteRoute* r = overlay.longestMatch(key.ipv4_src);
    uint32_t bits = r != nullptr ? static_cast<uint32_t>(std::popcount(r->mask_be)) : 1;
    for (const vxlan::RemoteRoute& other : overlay.routes()) {
      const auto d = static_cast<uint32_t>(std::countl_zero(src ^ rte_be_to_cpu_32(other.net_be)));
      if (d < static_cast<uint32_t>(std::popcount(other.mask_be))) bits = std::max(bits, d + 1);
    }
    out.mask.ipv4_src = prefixMaskBe(std::min<uint32_t>(32, octetsFor(bits) * 8));
    refused = r == nullptr || r->tunnel != tunnel;
  }
  if (refused) out.actions = dropAction(DropReason::kOverlaySpoofedSource);
  return refused;
}

// What every decision reads first with the overlay: tun_vni (tunnelled or
// not), and for a tunnelled packet tun_src, since only known remote VTEPs
// may send, then the inner source, which must be that node's. True when
// that decided (a drop; `out` written).
bool refusedTunnel(const RouteTables& tables, const flow::FlowKey& key, FlowTranslation& out) {
  if (tables.overlay == nullptr) return false;
  out.mask.tun_vni = 0xffffffffU;
  if (key.tun_vni == 0) return false;
  out.mask.tun_src = 0xffffffffU;
  const uint16_t tunnel = tables.overlay->tunnelForVtep(key.tun_src);
  if (tunnel == vxlan::kNoTunnel) {
    out.actions = dropAction(DropReason::kVxlanUnknownSource);
    return true;
  }
  return spoofedInnerSource(*tables.overlay, tunnel, key, out);
}

// The host port filter (host_path.h) for a packet to a host address: true
// when it refuses it (`out` holds the drop). Reads ip_proto; for TCP and
// UDP the fragment state and tp_dst, as the widest prefix of whole nibbles
// in which every port decides alike (nibbles: at most four port masks).
bool hostPortRefused(const HostPath& host, const flow::FlowKey& key, uint8_t icmp_proto, FlowTranslation& out) {
  if (!host.filter_ports) return false;
  out.mask.ip_proto = 0xff;
  if (key.ip_proto == icmp_proto) return false;
  const uint16_t* listed = nullptr;
  uint32_t count = 0;
  if (key.ip_proto == kIpProtoTcp) {
    listed = host.tcp_ports;
    count = host.tcp_count;
  } else if (key.ip_proto == kIpProtoUdp) {
    listed = host.udp_ports;
    count = host.udp_count;
  } else {
    out.actions = dropAction(DropReason::kHostPortNotAllowed);
    return true;
  }
  out.mask.ip_frag = 0xff;
  if (key.ip_frag == static_cast<uint8_t>(flow::IpFrag::kLater)) return false;
  const uint16_t port = rte_be_to_cpu_16(key.tp_dst);
  // The top bit alone tells a reply's port from every listed one.
  uint32_t bits = 1;
  bool allowed = port >= kHostReplyPortsFrom;
  for (uint32_t i = 0; !allowed && i < count; ++i) {
    const auto d = static_cast<uint32_t>(std::countl_zero(static_cast<uint16_t>(port ^ listed[i])));
    allowed = d == 16;
    bits = std::max(bits, d + 1);
  }
  bits = std::min<uint32_t>(16, (bits + 3) / 4 * 4);
  out.mask.tp_dst = rte_cpu_to_be_16(static_cast<uint16_t>(0xffffU << (16 - bits)));
  if (allowed) return false;
  out.actions = dropAction(DropReason::kHostPortNotAllowed);
  return true;
}

// Remote nodes route only pod CIDRs and routed prefixes into the tunnel, so
// a tunnelled packet to a host address was forged: it must not reach the
// node's kernel through the host path as if a local pod had sent it.
// tun_vni is in the mask whenever it can be set, the host address in full.
bool tunnelledToHost(const flow::FlowKey& key, FlowTranslation& out) {
  if (key.tun_vni == 0) return false;
  out.actions = dropAction(DropReason::kOverlayToHost);
  return true;
}

// A packet addressed to the gateway itself (either family): an echo request
// that came whole and untunnelled is answered (a tunnelled one would need
// its reply encapsulated back), the rest is to_gateway. Only this decision
// reads ip_proto, and for ICMP the fragment state, type and code: the
// protocol check comes first, so other traffic to the gateway shares one
// megaflow per protocol.
void toGateway(const flow::FlowKey& key, uint8_t icmp_proto, uint8_t echo_request, FlowTranslation& out) {
  out.actions = dropAction(DropReason::kToGateway);
  if (key.tun_vni != 0) return;  // (tun_vni is in the mask whenever it can be set)
  out.mask.ip_proto = 0xff;
  if (key.ip_proto != icmp_proto) return;
  out.mask.ip_frag = 0xff;
  if (key.ip_frag != static_cast<uint8_t>(flow::IpFrag::kNone)) return;
  out.mask.icmp_type = 0xff;
  out.mask.icmp_code = 0xff;
  if (key.icmp_type != echo_request || key.icmp_code != 0) return;
  out.actions.rewrite_flags = kAnswerEcho;
}

// A remote node's pod CIDR holding the destination, as a tunnel and the
// CIDR's prefix length.
struct RemoteMatch {
  uint16_t tunnel = vxlan::kNoTunnel;
  uint32_t prefix_len = 0;
};

// The decision for a destination that is neither a local pod nor the
// gateway, either family: the tunnel toward the remote node whose pod CIDR
// holds it, or kNoTunnel after writing the drop. Only a destination prefix
// decides, so `set_prefix(routes, at_least)` writes the destination mask as
// the widest prefix that decides alike (destinationPrefix); `match()` is the
// family's longest remote match; `unrouted()` writes the family's decision
// for a destination no node holds (answered inside the pod CIDR).
template <typename SetPrefix, typename Match, typename Unrouted>
uint16_t remoteTunnel(const RouteTables& tables, bool tunnelled, SetPrefix set_prefix, Match match,
                      Unrouted unrouted, FlowTranslation& out) {
  if (tables.overlay != nullptr) {
    if (tunnelled) {
      // Remote nodes reach each other directly; we relay nothing.
      set_prefix(false, 1);
      out.actions = dropAction(DropReason::kOverlayNoRoute);
      return vxlan::kNoTunnel;
    }
    if (const RemoteMatch r = match(); r.tunnel != vxlan::kNoTunnel) {
      set_prefix(true, r.prefix_len);
      return r.tunnel;
    }
  }
  unrouted();
  return vxlan::kNoTunnel;
}

// The end both families share once the destination is a local pod (out
// port `pod_port`) or a remote node (`tunnel`): only now is the TTL or hop
// limit read, so the drops above stay independent of it.
void forwardTo(const RouteTables& tables, const flow::FlowKey& key, uint8_t rewrite, uint16_t pod_port,
               uint16_t tunnel, FlowTranslation& out) {
  out.mask.ttl_class = 0xff;
  if (key.ttl_class != static_cast<uint8_t>(flow::TtlClass::kMany)) {
    out.actions = dropAction(DropReason::kTtlExceeded);
    return;
  }
  out.actions.rewrite_flags = rewrite;
  if (tunnel != vxlan::kNoTunnel) {
    out.actions.kind = flow::MegaflowActions::Kind::kEncap;
    out.actions.out_port = tables.uplink_port;
    out.actions.arg = tunnel;
    return;
  }
  out.actions.kind = flow::MegaflowActions::Kind::kOutput;
  out.actions.out_port = pod_port;
  if (tables.port_mtus != nullptr) out.actions.max_frame = maxFrameForMtu(tables.port_mtus[pod_port]);
}

// A pod's IPv4 packet through the external gateway (its destination mask
// already written): only now is the TTL read, as forwardTo does.
void forwardExternal(const RouteTables& tables, const flow::FlowKey& key, FlowTranslation& out) {
  out.mask.ttl_class = 0xff;
  if (key.ttl_class != static_cast<uint8_t>(flow::TtlClass::kMany)) {
    out.actions = dropAction(DropReason::kTtlExceeded);
    return;
  }
  out.actions = flow::MegaflowActions{};
  out.actions.kind = flow::MegaflowActions::Kind::kExternal;
  out.actions.out_port = tables.uplink_port;
  out.actions.max_frame = tables.external_max_frame;
}

// An untunnelled IPv4 packet that came in on the uplink: from the external
// network. Its source first (none of the cluster's), then its destination:
// a local pod or a local pod's routed prefix, as from anywhere; nothing else
// (no transit through this node, not even to its gateway address).
void fromOutside(const RouteTables& tables, const flow::FlowKey& key, FlowTranslation& out) {
  uint32_t src_bits = 32;
  const bool refused = externalSourceInCluster(tables, key.ipv4_src, &src_bits);
  out.mask.ipv4_src = prefixMaskBe(src_bits);
  if (refused) {
    out.actions = dropAction(DropReason::kExternalSpoofedSource);
    return;
  }
  const uint32_t dst = key.ipv4_dst;
  if (dst != tables.gateway_ip_be) {
    if (const PodRoute* route = tables.fib != nullptr ? tables.fib->lookup(dst) : nullptr) {
      forwardTo(tables, key, kRewriteL3, route->port_no, vxlan::kNoTunnel, out);
      return;
    }
    if (const RoutedPrefix* p = tables.prefixes != nullptr ? tables.prefixes->longestMatch(dst) : nullptr) {
      out.mask.ipv4_dst =
          prefixMaskBe(destinationPrefix(tables, dst, false, static_cast<uint32_t>(std::popcount(p->mask_be))));
      forwardTo(tables, key, kRewriteL3, p->port_no, vxlan::kNoTunnel, out);
      return;
    }
    out.mask.ipv4_dst = prefixMaskBe(destinationPrefix(tables, dst, false, 1));
  }
  out.actions = dropAction(DropReason::kExternalNotLocal);
}

// The IPv6 decision: a local pod's /128, the gateway, a remote node's IPv6
// pod CIDR, or unrouted.
void translateIpv6(const RouteTables& tables, const flow::FlowKey& key, FlowTranslation& out) {
  std::memset(out.mask.ipv6_dst, 0xff, 16);
  const uint8_t* dst = key.ipv6_dst;
  if (refusedTunnel(tables, key, out)) return;
  if (tables.v6 != nullptr && tables.v6->isGateway(dst)) {
    toGateway(key, kIpProtoIcmpv6, kIcmpv6EchoRequest, out);
    return;
  }
  if (tables.host != nullptr && tables.host->isHostIpv6(dst)) {
    if (tunnelledToHost(key, out) || hostPortRefused(*tables.host, key, kIpProtoIcmpv6, out)) return;
    forwardTo(tables, key, kRewriteL3v6, tables.host->port_no, vxlan::kNoTunnel, out);
    return;
  }
  const PodRoute6* route = tables.fib6 != nullptr ? tables.fib6->lookup(dst) : nullptr;
  if (route != nullptr) {
    forwardTo(tables, key, kRewriteL3v6, route->port_no, vxlan::kNoTunnel, out);
    return;
  }
  if (const RoutedPrefix6* p = tables.prefixes != nullptr ? tables.prefixes->longestMatch6(dst) : nullptr) {
    setPrefixMask6(out.mask.ipv6_dst, destinationPrefix6(tables, dst, true, p->prefix_len));
    forwardTo(tables, key, kRewriteL3v6, p->port_no, vxlan::kNoTunnel, out);
    return;
  }
  const uint16_t tunnel = remoteTunnel(
      tables, key.tun_vni != 0,
      [&](bool routes, uint32_t at_least) {
        setPrefixMask6(out.mask.ipv6_dst, destinationPrefix6(tables, dst, routes, at_least));
      },
      [&] {
        const vxlan::RemoteRoute6* r = tables.overlay->longestMatch6(dst);
        return r != nullptr ? RemoteMatch{r->tunnel, r->prefix_len} : RemoteMatch{};
      },
      [&] {
        // Inside our IPv6 pod CIDR (no pod holds it): answered, and the
        // prefix never reaches beyond the CIDR. (A prefix around an address
        // outside it never reaches into it: it would hold the gateway.)
        const bool in_pod_cidr = tables.v6 != nullptr && tables.v6->contains(dst);
        const uint32_t at_least = in_pod_cidr ? (tables.v6->prefix_len + 7U) / 8 * 8 : 1;
        setPrefixMask6(out.mask.ipv6_dst, destinationPrefix6(tables, dst, true, at_least));
        out.actions = dropAction(DropReason::kNoRoute);
        if (in_pod_cidr) out.actions.rewrite_flags = kAnswerUnreachable;
      },
      out);
  if (tunnel != vxlan::kNoTunnel) forwardTo(tables, key, kRewriteL3v6, 0, tunnel, out);
}

}  // namespace

void translateFlow(const RouteTables& tables, const flow::FlowKey& key, FlowTranslation& out) {
  out.mask = flow::zeroKey();
  out.actions = flow::MegaflowActions{};
  // Consulted by every decision: IPv4 or IPv6 (the pipeline translates nothing else).
  out.mask.eth_type = 0xffff;
  // Sources first: a spoofed packet is dropped whatever its destination.
  if (tables.sources != nullptr) {
    out.mask.in_port = 0xffff;
    if (const PortSources* s = tables.sources->checked(key.in_port);
        s != nullptr && !sourcesAllowed(*s, tables.prefixes, key, out))
      return;
  }
  if (key.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
    translateIpv6(tables, key, out);
    return;
  }
  out.mask.ipv4_dst = 0xffffffffU;
  const uint32_t dst = key.ipv4_dst;
  if (refusedTunnel(tables, key, out)) return;
  if (tables.external && key.tun_vni == 0) {
    out.mask.in_port = 0xffff;
    if (key.in_port == tables.uplink_port) {
      fromOutside(tables, key, out);
      return;
    }
  }
  if (dst == tables.gateway_ip_be) {
    toGateway(key, kIpProtoIcmp, kIcmpEchoRequest, out);
    return;
  }
  if (tables.host != nullptr && tables.host->isHostIpv4(dst)) {
    if (tunnelledToHost(key, out) || hostPortRefused(*tables.host, key, kIpProtoIcmp, out)) return;
    forwardTo(tables, key, kRewriteL3, tables.host->port_no, vxlan::kNoTunnel, out);
    return;
  }
  const PodRoute* route = tables.fib != nullptr ? tables.fib->lookup(dst) : nullptr;
  if (route != nullptr) {
    forwardTo(tables, key, kRewriteL3, route->port_no, vxlan::kNoTunnel, out);
    return;
  }
  if (const RoutedPrefix* p = tables.prefixes != nullptr ? tables.prefixes->longestMatch(dst) : nullptr) {
    out.mask.ipv4_dst =
        prefixMaskBe(destinationPrefix(tables, dst, true, static_cast<uint32_t>(std::popcount(p->mask_be))));
    forwardTo(tables, key, kRewriteL3, p->port_no, vxlan::kNoTunnel, out);
    return;
  }
  bool external = false;  // set by the unrouted step below
  const uint16_t tunnel = remoteTunnel(
      tables, key.tun_vni != 0,
      [&](bool routes, uint32_t at_least) {
        out.mask.ipv4_dst = prefixMaskBe(destinationPrefix(tables, dst, routes, at_least));
      },
      [&] {
        const vxlan::RemoteRoute* r = tables.overlay->longestMatch(dst);
        return r != nullptr ? RemoteMatch{r->tunnel, static_cast<uint32_t>(std::popcount(r->mask_be))}
                            : RemoteMatch{};
      },
      [&] {
        // Inside our pod CIDR (no pod holds it): answered, and the prefix
        // never reaches beyond the CIDR. (A prefix around an address outside
        // it never reaches into it: it would hold the gateway.)
        const bool in_pod_cidr = tables.pod_mask_be != 0 && (dst & tables.pod_mask_be) == tables.pod_net_be;
        const uint32_t at_least = in_pod_cidr ? static_cast<uint32_t>(std::popcount(tables.pod_mask_be)) : 1;
        uint32_t bits = destinationPrefix(tables, dst, true, at_least);
        // The CIDR's network and broadcast addresses name no host and are not
        // answered (a directed broadcast must not draw errors): the prefix of
        // an answered address holds neither.
        const uint32_t broadcast = tables.pod_net_be | ~tables.pod_mask_be;
        const bool answer = in_pod_cidr && dst != tables.pod_net_be && dst != broadcast;
        if (in_pod_cidr)
          bits = answer ? std::max({bits, prefixExcluding(dst, tables.pod_net_be), prefixExcluding(dst, broadcast)})
                        : 32;
        // Outside the pod CIDR: the external network's, where it may go.
        if (tables.external && !in_pod_cidr) external = externalDestinationAllowed(dst, &bits);
        out.mask.ipv4_dst = prefixMaskBe(bits);
        out.actions = dropAction(DropReason::kNoRoute);
        if (answer) out.actions.rewrite_flags = kAnswerUnreachable;
      },
      out);
  if (tunnel != vxlan::kNoTunnel) forwardTo(tables, key, kRewriteL3, 0, tunnel, out);
  if (external) forwardExternal(tables, key, out);
}

}  // namespace sluice
