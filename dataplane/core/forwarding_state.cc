#include "dataplane/core/forwarding_state.h"

#include <cstring>

#include "dataplane/core/control_module.h"
#include "dataplane/core/port_table.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {
namespace {

rte_ether_addr toEther(const MacAddress& mac) {
  rte_ether_addr a;
  std::memcpy(a.addr_bytes, mac.bytes.data(), 6);
  return a;
}

// The fast path's view of the node's IPv6 network; the gateway's link-local
// address is the one its MAC gives (what a pod's neighbor discovery may ask for).
Ipv6PodNet ipv6PodNetOf(const SluicedConfig& c) {
  Ipv6PodNet net;
  if (!c.pod_cidr_v6 || !c.gateway_v6) return net;
  net.enabled = true;
  net.prefix_len = c.pod_cidr_v6->prefix_len;
  std::memcpy(net.net, c.pod_cidr_v6->network.bytes.data(), 16);
  std::memcpy(net.gateway, c.gateway_v6->bytes.data(), 16);
  std::memcpy(net.gateway_link_local, linkLocalFromMac(c.gateway_mac).bytes.data(), 16);
  net.router_lifetime_s = c.ipv6_router_lifetime_s;
  return net;
}

// What a pod's port may send with (source_check.h).
PortSources portSourcesOf(const PortRequest& pod) {
  PortSources s;
  s.checked = pod.source_validation;
  std::memcpy(s.mac, pod.mac.bytes.data(), 6);
  s.has_ipv4 = pod.hasIpv4();
  s.ipv4_be = pod.ip.networkOrder();
  s.has_ipv6 = pod.ipv6.has_value();
  if (pod.ipv6) std::memcpy(s.ipv6, pod.ipv6->bytes.data(), 16);
  std::memcpy(s.link_local, linkLocalFromMac(pod.mac).bytes.data(), 16);
  return s;
}

}  // namespace

ForwardingState::ForwardingState(const SluicedConfig& config, uint16_t port_table)
    : gateway_ip_be_(config.gateway.networkOrder()), gateway_mac_(toEther(config.gateway_mac)),
      pod_net_be_(config.pod_cidr.network.networkOrder()),
      pod_mask_be_(Ipv4Address{config.pod_cidr.mask()}.networkOrder()), v6_net_(ipv6PodNetOf(config)),
      port_mtus_(port_table), port_macs_(port_table) {}

void ForwardingState::rebuild(const PortTable& ports, const std::vector<ControlModule*>& modules) {
  std::vector<ForwardingTable::Entry> routes;
  std::vector<Ipv6ForwardingTable::Entry> routes6;
  auto sources = std::make_shared<SourceTable>();  // a module's port (the uplink) is not checked
  sources->ports.assign(ports.size(), PortSources{});
  std::vector<RoutedPrefix> prefixes;
  std::vector<RoutedPrefix6> prefixes6;
  // Pods' ports have their MTU checked; a module's port (the uplink) has none here.
  port_mtus_.assign(ports.size(), 0);
  port_macs_.assign(ports.size(), rte_ether_addr{});
  ports.forEachPod([&](uint16_t n, const PortEntry& e) {
    const PortRequest& pod = e.request;
    if (pod.hasIpv4()) routes.push_back({pod.ip, n, pod.mac});
    if (pod.ipv6) routes6.push_back({*pod.ipv6, n, pod.mac});
    sources->ports[n] = portSourcesOf(pod);
    for (const Ipv4Cidr& c : pod.routed_prefixes)
      prefixes.push_back({c.network.networkOrder(), Ipv4Address{c.mask()}.networkOrder(), n});
    for (const Ipv6Cidr& c : pod.routed_prefixes_v6) prefixes6.push_back({c.network.bytes, c.prefix_len, n});
    port_mtus_[n] = static_cast<uint16_t>(pod.mtu);
    port_macs_[n] = toEther(pod.mac);
  });
  for (const ControlModule* m : modules) m->fillPortTables(*sources, port_mtus_);
  fib_ = std::make_shared<const ForwardingTable>(routes);
  fib6_ = std::make_shared<const Ipv6ForwardingTable>(routes6);
  // A port's sources or their checking changing (a port added, removed, or
  // re-made at the same number) revalidates its megaflows with the routes:
  // each holds in_port and the source fields it was decided on.
  sources_ = std::move(sources);
  prefixes_ = std::make_shared<const RoutedPrefixTable>(std::move(prefixes), std::move(prefixes6));
}

RouteTables ForwardingState::routeTables(const std::vector<ControlModule*>& modules) const {
  // The overlay's fields are the overlay module's to fill.
  RouteTables tables{.fib = fib_.get(),
                     .gateway_ip_be = gateway_ip_be_,
                     .fib6 = fib6_.get(),
                     .v6 = &v6_net_,
                     .port_mtus = port_mtus_.data(),
                     .pod_net_be = pod_net_be_,
                     .pod_mask_be = pod_mask_be_,
                     .sources = sources_.get(),
                     .prefixes = prefixes_.get()};
  for (const ControlModule* m : modules) m->fillRouteTables(tables);
  return tables;
}

void ForwardingState::fillSnapshot(PmdSnapshot& snap) const {
  snap.fib = fib_;
  snap.gateway_ip_be = gateway_ip_be_;
  snap.gateway_mac = gateway_mac_;
  snap.pod_net_be = pod_net_be_;
  snap.pod_mask_be = pod_mask_be_;
  snap.fib6 = fib6_;
  snap.v6 = v6_net_;
  snap.sources = sources_;
  snap.prefixes = prefixes_;
  snap.port_mtus = port_mtus_;
  snap.port_macs = port_macs_;
}

}  // namespace sluice
