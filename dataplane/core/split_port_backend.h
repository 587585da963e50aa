// The PortBackend sluiced runs with: vhost-user ports from one backend
// (VhostPortBackend: the vhost library, no ethdev), DPDK vdevs from another
// (DpdkPortBackend); every later call goes to the backend that made the port
// (a port with a VhostPort is the vhost-user one's). Control thread only,
// but for waitSocketReleased (see PortBackend).
#pragma once

#include "dataplane/core/port_backend.h"

namespace sluice {

class SplitPortBackend final : public PortBackend {
 public:
  // Both outlive this object. They may be one and the same (every port an
  // ethdev).
  SplitPortBackend(PortBackend& vhost_user, PortBackend& vdevs) : vhost_user_(vhost_user), vdevs_(vdevs) {}

  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string& socket_path, bool client_mode,
                                              uint16_t queues) override {
    return vhost_user_.createVhostUser(port_no, socket_path, client_mode, queues);
  }
  absl::StatusOr<CreatedPort> createVdev(uint16_t port_no, const std::string& devargs) override {
    return vdevs_.createVdev(port_no, devargs);
  }
  void destroy(const CreatedPort& port) override { of(port).destroy(port); }
  bool waitSocketReleased(const std::string& socket_path, std::chrono::steady_clock::duration limit) override {
    return vhost_user_.waitSocketReleased(socket_path, limit);
  }
  absl::Status setMtu(const CreatedPort& port, uint32_t mtu) override { return of(port).setMtu(port, mtu); }
  bool linkUp(const CreatedPort& port) override { return of(port).linkUp(port); }
  ByteCounts bytes(const CreatedPort& port) override { return of(port).bytes(port); }
  uint16_t enabledTxQueues(const CreatedPort& port) override { return of(port).enabledTxQueues(port); }
  bool takeQueueStateChange() override {
    // Both, always: each clears its own flag.
    const bool vhost_user = vhost_user_.takeQueueStateChange();
    const bool vdevs = &vdevs_ != &vhost_user_ && vdevs_.takeQueueStateChange();
    return vhost_user || vdevs;
  }

 private:
  // A net_vhost port (vhost-user on the vdev backend) has no VhostPort: it
  // belongs to the vdev backend, which made it when both are one.
  PortBackend& of(const CreatedPort& port) { return port.vhost != nullptr ? vhost_user_ : vdevs_; }

  PortBackend& vhost_user_;
  PortBackend& vdevs_;
};

}  // namespace sluice
