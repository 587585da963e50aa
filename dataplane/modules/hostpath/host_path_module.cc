#include "dataplane/modules/hostpath/host_path_module.h"

#include <algorithm>
#include <cstring>

#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/forwarding_table_v6.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice::hostpath {

HostPath hostPathOf(const HostAddresses& addresses, uint16_t port_no, const HostPathPorts& ports) {
  HostPath h;
  // The config refuses longer lists; the snapshot's arrays are the bound.
  h.filter_ports = !ports.all;
  h.tcp_count = static_cast<uint8_t>(std::min<size_t>(ports.tcp.size(), kMaxHostPathPorts));
  h.udp_count = static_cast<uint8_t>(std::min<size_t>(ports.udp.size(), kMaxHostPathPorts));
  std::copy_n(ports.tcp.begin(), h.tcp_count, h.tcp_ports);
  std::copy_n(ports.udp.begin(), h.udp_count, h.udp_ports);
  h.enabled = true;
  h.port_no = port_no;
  h.has_ipv4 = addresses.v4.has_value();
  if (addresses.v4) h.ipv4_be = addresses.v4->networkOrder();
  h.has_ipv6 = addresses.v6.has_value();
  if (addresses.v6) std::memcpy(h.ipv6, addresses.v6->bytes.data(), 16);
  return h;
}

PortSources hostSourcesOf(const HostAddresses& addresses, const MacAddress& kernel_mac) {
  PortSources s;
  s.checked = true;
  std::memcpy(s.mac, kernel_mac.bytes.data(), 6);
  s.has_ipv4 = addresses.v4.has_value();
  if (addresses.v4) s.ipv4_be = addresses.v4->networkOrder();
  s.has_ipv6 = addresses.v6.has_value();
  if (addresses.v6) std::memcpy(s.ipv6, addresses.v6->bytes.data(), 16);
  std::memcpy(s.link_local, linkLocalFromMac(kernel_mac).bytes.data(), 16);
  return s;
}

HostPathModule::HostPathModule(DataplaneControl& core, HostTap& tap, const HostAddresses& addresses,
                               const HostPathPorts& ports)
    : core_(core), tap_(tap), host_(hostPathOf(addresses, kHostPortNo, ports)),
      sources_(hostSourcesOf(addresses, tap.kernelMac())) {}

absl::StatusOr<std::unique_ptr<HostPathModule>> HostPathModule::attach(DataplaneControl& core, HostTap& tap,
                                                                       const HostAddresses& addresses,
                                                                       const HostPathPorts& ports) {
  std::unique_ptr<HostPathModule> module(new HostPathModule(core, tap, addresses, ports));
  core.registerModule(module.get());
  DataplaneControl::Change change(core);
  // One rx queue, polled by PMD 0; every PMD may send to it (the lock is
  // taken once per output batch).
  if (absl::Status s = core.addModulePortLocked(kHostPortNo, "host", tap.dpdkPort(), tap.txLock(), 0); !s.ok()) {
    core.unregisterModuleLocked(module.get());
    return s;
  }
  return module;
}

HostPathModule::~HostPathModule() {
  DataplaneControl::Change change(core_);
  core_.removeModulePortLocked(kHostPortNo);
  core_.unregisterModuleLocked(this);
}

void HostPathModule::fillSnapshot(PmdSnapshot& snap, size_t pmd) const {
  (void)pmd;
  snap.host = host_;
  std::memcpy(snap.port_macs[kHostPortNo].addr_bytes, tap_.kernelMac().bytes.data(), 6);
}

void HostPathModule::fillRouteTables(RouteTables& tables) const { tables.host = &host_; }

void HostPathModule::fillPortTables(SourceTable& sources, std::vector<uint16_t>& mtus) const {
  sources.ports[kHostPortNo] = sources_;
  mtus[kHostPortNo] = tap_.mtu();
}

}  // namespace sluice::hostpath
