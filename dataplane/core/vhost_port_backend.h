// vhost-user ports on DPDK's vhost library, as Open vSwitch drives them: a
// socket registered with rte_vhost_driver_register and callbacks of ours,
// no ethdev per pod (so no port of RTE_MAX_ETHPORTS is used). The PMDs poll
// and send through each port's VhostPort (dataplane/datapath/vhost_port.h).
//
// Threads: the PortBackend calls run on the control thread (under the
// control path's lock). destroy() hands the socket to the backend's reaper
// (vhost_unregister_reaper.h) and returns: rte_vhost_driver_unregister
// waits out any callback running on the socket's connections, which a
// stalling peer can make long, so control never calls it. The library's
// callbacks run on its own thread ("vhost-events"), and during unregister on
// the reaper's: they never take the control path's lock.
//
// One connection per socket (vhost_connection_slot.h): the library asks
// before serving a connection, and we refuse a second one while the first
// is open; device events of any connection but the admitted one are ignored.
//
// Locks of this file (never one inside the other):
//  - the registry's (sockets by path, their enabled tx queues, connection
//    slots, whether they are being unregistered): taken by every callback
//    and by sluiced's connect() and accept() (isVhostUserSocket), held by
//    nobody while calling into the vhost library.
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
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dataplane/core/port_backend.h"
#include "dataplane/core/vhost_unregister_reaper.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

class VhostPortBackend final : public PortBackend {
 public:
  // `pmds`: the mailbox of every PMD that may poll or send on these ports; a
  // pod going away waits until each running one has passed its quiescent
  // point before the library unmaps the pod's memory.
  explicit VhostPortBackend(std::vector<PmdMailbox*> pmds);
  // Unregisters any socket still open (control removes every port first)
  // and waits until the library let go of every socket.
  ~VhostPortBackend() override;
  VhostPortBackend(const VhostPortBackend&) = delete;
  VhostPortBackend& operator=(const VhostPortBackend&) = delete;

  // UNAVAILABLE (retry later) while a deleted port's registration on the
  // same socket is still being unregistered.
  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string& socket_path, bool client_mode,
                                              uint16_t queues) override;
  // Takes the port out at once and unregisters its socket on the reaper's
  // thread (a server's socket file goes then, with the library's listener).
  void destroy(const CreatedPort& port) override;
  // Until the reaper unregistered every destroyed port's registration on
  // `socket_path` (any thread).
  bool waitSocketReleased(const std::string& socket_path, std::chrono::steady_clock::duration limit) override {
    return reaper_.waitReleased(socket_path, limit);
  }
  // A device is connected and running (the library called new_device).
  bool linkUp(const CreatedPort& port) override;
  // The library's per-vring byte counters, summed over the port's
  // connections so far.
  ByteCounts bytes(const CreatedPort& port) override;
  uint16_t enabledTxQueues(const CreatedPort& port) override;
  bool takeQueueStateChange() override;

  // Waits until every destroyed port's socket is unregistered, at most
  // `limit`; whether so.
  bool waitUnregistered(std::chrono::steady_clock::duration limit) { return reaper_.waitIdle(limit); }
  // Whether `path` is the socket of a port of any backend (sluiced's
  // connect() and accept() bound such sockets' reads and writes).
  static bool isVhostUserSocket(const std::string& path);

  // One registered socket: its VhostPort and what the callbacks keep for it.
  struct Socket;

 private:
  // The library's callbacks (rte_vhost_device_ops), on its thread or, from
  // unregister, on ours. They find the socket by the device's path.
  static int onNewConnection(int vid);
  static void onDestroyConnection(int vid);
  static int onNewDevice(int vid);
  static void onDestroyDevice(int vid);
  static int onVringStateChanged(int vid, uint16_t vring, int enable);
  static const rte_vhost_device_ops& deviceOps();
  // Bytes the connected device `vid` has received and sent (device_mu_ held).
  static ByteCounts deviceBytes(int vid);
  // Unregisters the socket at `path` (its device, if any, goes away first;
  // the library first waits out a message being read on its connection).
  static int unregister(const std::string& path);
  // Hands a destroyed port's socket to the reaper.
  void retire(std::unique_ptr<Socket> socket);
  // Called on the reaper's thread once `socket` is unregistered.
  static void forget(std::unique_ptr<Socket> socket);

  std::vector<PmdMailbox*> pmds_;
  // Control thread only: the sockets this backend made, by their VhostPort.
  std::unordered_map<const VhostPort*, std::unique_ptr<Socket>> sockets_;
  // A connected device's id and its earlier connections' counts (Socket's
  // stats fields); see the file comment.
  std::mutex device_mu_;
  // Set by the callbacks when a port's enabled queues or link may have changed.
  std::atomic<bool> queue_change_{false};
  // Last: destroyed first, after it finished every job (whose callbacks
  // reach the members above).
  VhostUnregisterReaper reaper_{unregister};
};

}  // namespace sluice
