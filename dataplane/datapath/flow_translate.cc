// The L3 decision (l3_forward.cc), recording which key fields it reads.
#include "dataplane/datapath/flow_translate.h"

#include <rte_byteorder.h>
#include <rte_ether.h>

#include <bit>

namespace sluice {
namespace {

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
  if (tables.fib != nullptr)
    for (uint32_t pod : tables.fib->addresses()) exclude(pod, 32);
  if (routes && tables.overlay != nullptr)
    for (const vxlan::RemoteRoute& r : tables.overlay->routes())
      exclude(r.net_be, static_cast<uint32_t>(std::popcount(r.mask_be)));
  return std::min<uint32_t>(32, (bits + 7) / 8 * 8);
}

uint32_t prefixMaskBe(uint32_t bits) {
  return bits == 0 ? 0 : rte_cpu_to_be_32(~uint32_t{0} << (32 - bits));
}

}  // namespace

void translateFlow(const RouteTables& tables, const flow::FlowKey& key, FlowTranslation& out) {
  out.mask = flow::zeroKey();
  out.actions = flow::MegaflowActions{};
  // Consulted by every decision: the pipeline only translates IPv4.
  out.mask.eth_type = 0xffff;
  out.mask.ipv4_dst = 0xffffffffU;
  const uint32_t dst = key.ipv4_dst;
  const bool tunnelled = key.tun_vni != 0;
  if (tables.overlay != nullptr) {
    out.mask.tun_vni = 0xffffffffU;
    if (tunnelled) {
      out.mask.tun_src = 0xffffffffU;
      if (tables.overlay->tunnelForVtep(key.tun_src) == vxlan::kNoTunnel) {
        out.actions = dropAction(DropReason::kVxlanUnknownSource);
        return;
      }
    }
  }
  if (dst == tables.gateway_ip_be) {
    out.actions = dropAction(DropReason::kToGateway);
    return;
  }
  const PodRoute* route = tables.fib != nullptr ? tables.fib->lookup(dst) : nullptr;
  uint16_t tunnel = vxlan::kNoTunnel;
  if (route == nullptr) {
    // Not a pod, not the gateway: only a destination prefix decides, so the
    // mask covers the whole prefix that decides alike (see destinationPrefix).
    if (tables.overlay != nullptr) {
      if (tunnelled) {
        // Remote nodes reach each other directly; we relay nothing.
        out.mask.ipv4_dst = prefixMaskBe(destinationPrefix(tables, dst, false, 1));
        out.actions = dropAction(DropReason::kOverlayNoRoute);
        return;
      }
      if (const vxlan::RemoteRoute* r = tables.overlay->longestMatch(dst); r != nullptr) {
        tunnel = r->tunnel;
        out.mask.ipv4_dst =
            prefixMaskBe(destinationPrefix(tables, dst, true, static_cast<uint32_t>(std::popcount(r->mask_be))));
      }
    }
    if (tunnel == vxlan::kNoTunnel) {
      out.mask.ipv4_dst = prefixMaskBe(destinationPrefix(tables, dst, true, 1));
      out.actions = dropAction(DropReason::kNoRoute);
      return;
    }
  }
  // Only now is the TTL read: drops above stay independent of it.
  out.mask.ttl_class = 0xff;
  if (key.ttl_class != static_cast<uint8_t>(flow::TtlClass::kMany)) {
    out.actions = dropAction(DropReason::kTtlExceeded);
    return;
  }
  out.actions.rewrite_flags = kRewriteL3;
  if (route == nullptr) {
    out.actions.kind = flow::MegaflowActions::Kind::kEncap;
    out.actions.out_port = tables.uplink_port;
    out.actions.arg = tunnel;
    return;
  }
  out.actions.kind = flow::MegaflowActions::Kind::kOutput;
  out.actions.out_port = route->port_no;
}

}  // namespace sluice
