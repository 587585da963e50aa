// Creates and destroys the DPDK ports behind Sluice ports. An interface so the
// control logic (numbering, validation, snapshots, statistics) is tested on a
// fake without EAL; the real ones are VhostPortBackend (vhost-user ports on
// DPDK's vhost library), DpdkPortBackend (DPDK vdevs, and vhost-user ports
// as net_vhost ethdevs) and SplitPortBackend (one of each, as sluiced runs
// them). Control thread only.
#pragma once

#include <absl/status/statusor.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "dataplane/datapath/vhost_port.h"

namespace sluice {

struct CreatedPort {
  uint16_t dpdk_port = 0;  // ethdev port id (unused with `vhost`)
  std::string dpdk_name;   // ethdev/vdev name (empty with `vhost`: there is no ethdev)
  uint16_t tx_queues = 1;  // tx queues the port offers
  uint16_t rx_queues = 1;  // rx queues the port offers (ids 0..rx_queues-1)
  // Non-null: a vhost-user port served by DPDK's vhost library, which the
  // PMDs poll and send on through this (no ethdev). Owned by the backend
  // that made it, freed by its destroy().
  VhostPort* vhost = nullptr;
};

class PortBackend {
 public:
  virtual ~PortBackend() = default;
  // A vhost-user port on `socket_path` with `queues` rx and tx queues (the
  // pod may enable fewer): sluiced listens (server) or connects and keeps
  // reconnecting (client). The port is started when this returns.
  virtual absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string& socket_path,
                                                      bool client_mode, uint16_t queues) = 0;
  // A DPDK vdev from validated devargs ("<driver>[,args]", port_request.h),
  // started when this returns. Only the real backend makes them.
  virtual absl::StatusOr<CreatedPort> createVdev(uint16_t /*port_no*/, const std::string& /*devargs*/) {
    return absl::UnimplementedError("type: DPDK vdev ports are not supported by this backend");
  }
  // Stops, closes and removes the port (and, for a server, its socket file).
  // Called only after no PMD polls or transmits on it any more, under
  // control's locks. VhostPortBackend's never waits on the pod: the port is
  // gone from the node when this returns, the library lets go of its socket
  // afterwards, and until then createVhostUser on the same socket fails
  // UNAVAILABLE (retry).
  virtual void destroy(const CreatedPort& port) = 0;
  // Waits until no destroyed port holds `socket_path` any more, at most
  // `limit`; whether so. The one call made without control's locks (AddPort
  // waits here before taking them): thread-safe. A backend whose destroy()
  // finishes before it returns has nothing to wait for.
  virtual bool waitSocketReleased(const std::string& /*socket_path*/,
                                  std::chrono::steady_clock::duration /*limit*/) {
    return true;
  }
  // Applies an IP MTU to the port's driver (rte_eth_dev_set_mtu).
  // Unimplemented when the driver has no MTU to set (vhost-user, net_vhost,
  // net_ring): the fast path's check is then the only one.
  virtual absl::Status setMtu(const CreatedPort& /*port*/, uint32_t /*mtu*/) {
    return absl::UnimplementedError("the port's driver sets no MTU");
  }
  // Whether the peer is connected and the link up.
  virtual bool linkUp(const CreatedPort& port) = 0;
  // Bytes the port has received and sent since it was created, as its driver
  // counts them (the PMDs count packets per port, not bytes: reading the
  // driver's figures here costs the fast path nothing). Zeros where unknown.
  struct ByteCounts {
    uint64_t rx = 0, tx = 0;
  };
  virtual ByteCounts bytes(const CreatedPort& /*port*/) { return {}; }
  // How many of `port`'s tx queues the peer enabled, counted from queue 0
  // (a virtio-net device enables its queue pairs in order): 1..tx_queues. A
  // port whose peer enabled none (not connected) counts 1. A vhost-user
  // port's driver refuses packets on a queue the pod did not enable.
  virtual uint16_t enabledTxQueues(const CreatedPort& port) { return port.tx_queues; }
  // True once after any port's enabled queues may have changed (its peer
  // enabled or disabled queues, or went away); control then asks again.
  virtual bool takeQueueStateChange() { return false; }
};

}  // namespace sluice
