// The L3 decision of issue 2 (l3_forward.cc), recording which key fields it reads.
#include "dataplane/datapath/flow_translate.h"

#include <rte_ether.h>

namespace sluice {

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
    if (tables.overlay != nullptr) {
      if (tunnelled) {
        // Remote nodes reach each other directly; we relay nothing.
        out.actions = dropAction(DropReason::kOverlayNoRoute);
        return;
      }
      tunnel = tables.overlay->routeFor(dst);
    }
    if (tunnel == vxlan::kNoTunnel) {
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
