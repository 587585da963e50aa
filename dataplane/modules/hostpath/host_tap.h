// The host interface: a net_tap port whose kernel side (interface
// `host-interface`) sluiced makes in its own network namespace, the node's.
// Opening it creates the vdev, starts the port, brings the kernel interface
// up, reads its MAC and MTU, and routes the node's pod CIDRs to it
// (kernel_routes.h); closing undoes all of it. Main thread only; the PMDs
// poll and send to the port once the module has put it in the port table.
#pragma once

#include <absl/status/statusor.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/net_address.h"
#include "dataplane/modules/hostpath/kernel_routes.h"

namespace sluice::hostpath {

class HostTap {
 public:
  static absl::StatusOr<std::unique_ptr<HostTap>> open(const std::string& iface, const std::vector<KernelRoute>& routes,
                                                       rte_mempool* pool);
  ~HostTap();
  HostTap(const HostTap&) = delete;
  HostTap& operator=(const HostTap&) = delete;

  uint16_t dpdkPort() const { return port_; }
  // The kernel interface's: the Ethernet destination toward the node.
  const MacAddress& kernelMac() const { return kernel_mac_; }
  // The kernel interface's MTU: the port's IP MTU.
  uint16_t mtu() const { return mtu_; }
  // Shared by every PMD that sends to the port (taken once per batch).
  rte_spinlock_t* txLock() { return &tx_lock_; }

 private:
  HostTap() { rte_spinlock_init(&tx_lock_); }

  std::string vdev_name_;
  std::string iface_;
  uint16_t port_ = 0;
  bool hotplugged_ = false;
  bool have_port_ = false;  // port_ is the TAP's
  bool started_ = false;
  int ifindex_ = 0;
  MacAddress kernel_mac_;
  uint16_t mtu_ = 0;
  std::vector<KernelRoute> routes_added_;
  rte_spinlock_t tx_lock_;
};

}  // namespace sluice::hostpath
