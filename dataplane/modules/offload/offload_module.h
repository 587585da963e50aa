// Partial offload as a control module: megaflows are offered to the offload
// manager (the core's FlowOffloadSink), the offload port is attached to it
// when the port appears and detached before it closes, and the grace periods
// the offload thread asks for (freed marks wait for every PMD to pass a
// quiescent point) are served with the core's snapshots on the flow
// thread's tick.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dataplane/core/control_module.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/offload/offload_manager.h"

namespace sluice {

class OffloadModule final : public ControlModule {
 public:
  // Which port's packets get marks: a pod's attachment ("container-id/
  // ifname", for tests on vhost-user ports), or a port number (the uplink,
  // where a NIC with a flow engine sits).
  struct Target {
    std::string attachment;
    std::optional<uint16_t> port_no;
  };
  // Registers with `core` (before start()).
  OffloadModule(DataplaneControl& core, offload::OffloadManager& manager, Target target);
  ~OffloadModule() override;
  OffloadModule(const OffloadModule&) = delete;
  OffloadModule& operator=(const OffloadModule&) = delete;

  offload::OffloadStatsView stats() const { return manager_.stats(); }

  void portAdded(uint16_t port_no, const PortRequest& request, std::optional<uint16_t> dpdk_port) override;
  void portClosing(uint16_t port_no) override;
  bool tick(std::chrono::steady_clock::time_point now) override;

 private:
  DataplaneControl& core_;
  offload::OffloadManager& manager_;
  const Target target_;
  std::optional<uint16_t> attached_;  // the port attached now
};

}  // namespace sluice
