#include "dataplane/core/would_happen.h"

#include <rte_ether.h>

#include <optional>

#include "dataplane/datapath/nd/neighbor_discovery.h"
#include "dataplane/datapath/parse_drop.h"

namespace sluice {

WouldHappen wouldHappen(DataplaneControl& control, uint16_t in_port, std::span<const uint8_t> frame) {
  WouldHappen w;
  w.parse = flow::extractFlowKey(frame.data(), static_cast<uint32_t>(frame.size()), in_port, std::nullopt, w.key);
  // As the PMD's screen stage: malformed, then ARP and IPv6 neighbor
  // discovery, then anything but untagged IPv4 or IPv6.
  if (w.parse != flow::ParseResult::kOk) {
    w.screened = true;
    w.reason = parseDropReason(w.parse);
    return w;
  }
  const bool untagged = (w.key.flags & flow::kFlagVlan) == 0;
  if (untagged && w.key.eth_type == RTE_BE16(RTE_ETHER_TYPE_ARP)) {
    w.screened = true;
    w.arp = true;
    return w;
  }
  const bool ipv6 = w.key.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV6);
  if (untagged && ipv6 && w.key.ip_proto == 58 && isNeighborDiscoveryType(w.key.icmp_type)) {
    w.screened = true;
    w.neighbor_discovery = true;
    return w;
  }
  if (!untagged || (w.key.eth_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) && !ipv6)) {
    w.screened = true;
    w.reason = DropReason::kUnsupportedEthertype;
    return w;
  }
  w.translation = control.translate(w.key);
  return w;
}

}  // namespace sluice
