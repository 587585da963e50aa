// A real PortBackend of ethdevs: DPDK vdevs standing in for pods, and
// vhost-user ports as hot-plugged `net_vhost` vdevs (each one of DPDK's
// RTE_MAX_ETHPORTS; sluiced uses them only where a pod port must be an
// ethdev, see sluiced/control_core.cc, and VhostPortBackend otherwise). Control thread only (DPDK's hot-plug
// calls are not for PMD threads).
#pragma once

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include <array>
#include <atomic>
#include <mutex>

#include "dataplane/core/mbuf_pools.h"
#include "dataplane/core/numa_topology.h"
#include "dataplane/core/port_backend.h"

namespace sluice {

// Whether DPDK's own argument parser (rte_kvargs_parse, which every vdev
// driver uses; no EAL needed) reads the arguments of `devargs` as exactly the
// key/value pairs sluiced validated (splitVdevDevargs): the last check before
// a driver sees them. InvalidArgument("devargs: ...") if not.
absl::Status checkDpdkReadsVdevArgs(const std::string& devargs);

class DpdkPortBackend final : public PortBackend {
 public:
  // A port's rx queues take their mbufs from the pool of the port's NUMA
  // socket (where rx queue placement puts the PMDs polling them), or the
  // home pool while its socket is unknown or has no PMD.
  DpdkPortBackend(const MbufPools& pools, const NumaTopology& topology) : pools_(pools), topology_(topology) {}

  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string& socket_path,
                                              bool client_mode, uint16_t queues) override;
  absl::StatusOr<CreatedPort> createVdev(uint16_t port_no, const std::string& devargs) override;
  void destroy(const CreatedPort& port) override;
  absl::Status setMtu(const CreatedPort& port, uint32_t mtu) override;
  bool linkUp(const CreatedPort& port) override;
  ByteCounts bytes(const CreatedPort& port) override;
  uint16_t enabledTxQueues(const CreatedPort& port) override;
  bool takeQueueStateChange() override;

 private:
  // Hot-plugs vdev `name` with `args`, `queues` rx and tx queues, started.
  absl::StatusOr<CreatedPort> createAndStart(const std::string& name, const std::string& args,
                                             const std::string& what, uint16_t queues = 1, bool vhost = false);
  // net_vhost's queue-state and link events (on the vhost-user thread):
  // keeps enabled_tx_ as the pod enables and disables its queues.
  static int onVhostEvent(uint16_t dpdk_port, rte_eth_event_type type, void* self, void* unused);
  void readQueueEvents(uint16_t dpdk_port, bool link_event);
  // Unregisters the callbacks (waiting out one that runs) and clears the state.
  void forgetQueueEvents(uint16_t dpdk_port);
  static bool ethdevLinkUp(uint16_t dpdk_port);

  const MbufPools& pools_;
  const NumaTopology& topology_;
  // Makes every vdev name unique over the process's life: DPDK keeps a
  // removed vdev's name reserved until its teardown completes.
  uint64_t generation_ = 0;
  // Per ethdev, bit q: the pod enabled tx queue q (its vring). Written by the
  // vhost-user thread's callbacks, read by control.
  std::mutex queue_mu_;
  std::array<uint32_t, RTE_MAX_ETHPORTS> enabled_tx_{};
  std::atomic<bool> queue_change_{false};
};

}  // namespace sluice
