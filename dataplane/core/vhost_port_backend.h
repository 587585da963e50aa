// vhost-user ports on DPDK's vhost library, as Open vSwitch drives them: a
// socket registered with rte_vhost_driver_register and callbacks of ours,
// no ethdev per pod (so no port of RTE_MAX_ETHPORTS is used). The PMDs poll
// and send through each port's VhostPort (dataplane/datapath/vhost_port.h).
//
// Threads: the PortBackend calls run on the control thread (under the
// control path's lock). The library's callbacks run on its own thread
// ("vhost-events"), and during rte_vhost_driver_unregister (our destroy) on
// the control thread: they never take the control path's lock, which
// control holds while it waits in unregister for a running callback.
//
// Locks of this file (never one inside the other):
//  - the registry's (sockets by path, their enabled tx queues): taken by
//    every callback, held by nobody while calling into the vhost library.
//    vring_state_changed runs with the library's vring locks held, so it
//    takes only this one.
//  - each backend's device lock (a connected device's id for its counters,
//    the counts of its earlier connections): taken by control around
//    rte_vhost_vring_stats_get, and by new_device / destroy_device, which
//    the library calls without its vring locks; so the device cannot be
//    freed while control reads its counters.
#pragma once

#include <rte_vhost.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dataplane/core/port_backend.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

class VhostPortBackend final : public PortBackend {
 public:
  // `pmds`: the mailbox of every PMD that may poll or send on these ports; a
  // pod going away waits until each running one has passed its quiescent
  // point before the library unmaps the pod's memory.
  explicit VhostPortBackend(std::vector<PmdMailbox*> pmds);
  // Unregisters any socket still open (control removes every port first).
  ~VhostPortBackend() override;
  VhostPortBackend(const VhostPortBackend&) = delete;
  VhostPortBackend& operator=(const VhostPortBackend&) = delete;

  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string& socket_path, bool client_mode,
                                              uint16_t queues) override;
  void destroy(const CreatedPort& port) override;
  // A device is connected and running (the library called new_device).
  bool linkUp(const CreatedPort& port) override;
  // The library's per-vring byte counters, summed over the port's
  // connections so far.
  ByteCounts bytes(const CreatedPort& port) override;
  uint16_t enabledTxQueues(const CreatedPort& port) override;
  bool takeQueueStateChange() override;

  // One registered socket: its VhostPort and what the callbacks keep for it.
  struct Socket;

 private:
  // The library's callbacks (rte_vhost_device_ops), on its thread or, from
  // unregister, on ours. They find the socket by the device's path.
  static int onNewDevice(int vid);
  static void onDestroyDevice(int vid);
  static int onVringStateChanged(int vid, uint16_t vring, int enable);
  static const rte_vhost_device_ops& deviceOps();
  // Bytes the connected device `vid` has received and sent (device_mu_ held).
  static ByteCounts deviceBytes(int vid);
  // Unregisters the socket at `path` (its device, if any, goes away first).
  static void unregister(const std::string& path);
  void forget(Socket* socket);

  std::vector<PmdMailbox*> pmds_;
  // Control thread only: the sockets this backend made, by their VhostPort.
  std::unordered_map<const VhostPort*, std::unique_ptr<Socket>> sockets_;
  // A connected device's id and its earlier connections' counts (Socket's
  // stats fields); see the file comment.
  std::mutex device_mu_;
  // Set by the callbacks when a port's enabled queues or link may have changed.
  std::atomic<bool> queue_change_{false};
};

}  // namespace sluice
