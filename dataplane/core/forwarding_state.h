// What the tables in force decide forwarding by: the node's networks (from
// the configuration) and, rebuilt from the port table at every republish,
// the IPv4 and IPv6 pod routes, each port's allowed sources, MTU and MAC,
// and the prefixes routed to pods. PMDs get it in their snapshots; upcalls
// and `sluicectl trace` translate with routeTables().
//
// Owned by DataplaneControl and guarded by its table lock; the tables
// themselves are immutable once built (shared with the snapshots).
#pragma once

#include <rte_ether.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/config/config.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/forwarding_table.h"
#include "dataplane/datapath/forwarding_table_v6.h"
#include "dataplane/datapath/routed_prefix_table.h"
#include "dataplane/datapath/source_check.h"

namespace sluice {

class ControlModule;
class PortTable;
struct PmdSnapshot;

class ForwardingState {
 public:
  // `port_table`: how many entries every per-port table has.
  ForwardingState(const SluicedConfig& config, uint16_t port_table);

  // New tables from the ports; then each module fills its own ports' sources
  // and MTUs.
  void rebuild(const PortTable& ports, const std::vector<ControlModule*>& modules);
  // The tables as translation reads them (the modules fill the overlay's).
  RouteTables routeTables(const std::vector<ControlModule*>& modules) const;
  // Copies the networks and tables into a PMD's snapshot.
  void fillSnapshot(PmdSnapshot& snap) const;

 private:
  const uint32_t gateway_ip_be_;
  const rte_ether_addr gateway_mac_;
  const uint32_t pod_net_be_;
  const uint32_t pod_mask_be_;
  // The node's IPv6 pod network, as the fast path reads it (disabled
  // without pod-cidr-v6 and gateway-v6).
  const Ipv6PodNet v6_net_;
  // The tables of the latest republish.
  std::shared_ptr<const ForwardingTable> fib_ = std::make_shared<const ForwardingTable>();
  std::shared_ptr<const Ipv6ForwardingTable> fib6_ = std::make_shared<const Ipv6ForwardingTable>();  // /128 routes
  std::shared_ptr<const SourceTable> sources_ = std::make_shared<const SourceTable>();
  std::shared_ptr<const RoutedPrefixTable> prefixes_ = std::make_shared<const RoutedPrefixTable>();
  // Each port's MTU by port number (0: a module's port, unchecked):
  // translation copies the out port's into an output action.
  std::vector<uint16_t> port_mtus_;
  // Each pod port's MAC by port number (what the PMDs rewrite toward it).
  std::vector<rte_ether_addr> port_macs_;
};

}  // namespace sluice
