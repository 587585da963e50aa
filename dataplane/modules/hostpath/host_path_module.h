// The exception path to the node's kernel as a control module: the host
// interface (host_tap.h) is a port of the core's table (polled by PMD 0,
// sent to by all, shown in stats as the uplink is, never a pod), its MAC
// and MTU are the kernel interface's, its sources are checked as a pod's
// (the kernel interface's MAC, the host addresses, its link-local address),
// and the host addresses go into every snapshot and translation
// (host_path.h).
#pragma once

#include <absl/status/statusor.h>

#include <memory>

#include "dataplane/config/host_addresses.h"
#include "dataplane/config/host_path_ports.h"
#include "dataplane/core/control_module.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/datapath/host_path.h"
#include "dataplane/datapath/source_check.h"
#include "dataplane/modules/hostpath/host_tap.h"

namespace sluice::hostpath {

// The host interface's port number: the one below the uplink's (pods take
// the lowest free numbers and never reach it unless max-ports is 31 or more).
inline constexpr uint16_t kHostPortNo = kUplinkPortNo - 1;

// What the module publishes, from the addresses, the ports pods may reach
// and the kernel interface (pure, for tests): the decisions' HostPath and
// the port's sources.
HostPath hostPathOf(const HostAddresses& addresses, uint16_t port_no, const HostPathPorts& ports = {});
PortSources hostSourcesOf(const HostAddresses& addresses, const MacAddress& kernel_mac);

class HostPathModule final : public ControlModule {
 public:
  // Registers with `core` and puts the host interface into its port table.
  static absl::StatusOr<std::unique_ptr<HostPathModule>> attach(DataplaneControl& core, HostTap& tap,
                                                                const HostAddresses& addresses,
                                                                const HostPathPorts& ports = {});
  // Takes the port out of the table (PMDs stopped or not).
  ~HostPathModule() override;
  HostPathModule(const HostPathModule&) = delete;
  HostPathModule& operator=(const HostPathModule&) = delete;

  void fillSnapshot(PmdSnapshot& snap, size_t pmd) const override;
  void fillRouteTables(RouteTables& tables) const override;
  void fillPortTables(SourceTable& sources, std::vector<uint16_t>& mtus) const override;

 private:
  HostPathModule(DataplaneControl& core, HostTap& tap, const HostAddresses& addresses, const HostPathPorts& ports);

  DataplaneControl& core_;
  HostTap& tap_;
  const HostPath host_;
  const PortSources sources_;
};

}  // namespace sluice::hostpath
