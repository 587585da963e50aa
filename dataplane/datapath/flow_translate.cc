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
  if (dst == tables.gateway_ip_be) {
    out.actions = dropAction(DropReason::kToGateway);
    return;
  }
  const PodRoute* route = tables.fib != nullptr ? tables.fib->lookup(dst) : nullptr;
  if (route == nullptr) {
    out.actions = dropAction(DropReason::kNoRoute);
    return;
  }
  // Only now is the TTL read: drops above stay independent of it.
  out.mask.ttl_class = 0xff;
  if (key.ttl_class != static_cast<uint8_t>(flow::TtlClass::kMany)) {
    out.actions = dropAction(DropReason::kTtlExceeded);
    return;
  }
  out.actions.kind = flow::MegaflowActions::Kind::kOutput;
  out.actions.rewrite_flags = kRewriteL3;
  out.actions.out_port = route->port_no;
}

}  // namespace sluice
