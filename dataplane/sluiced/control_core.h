// The control core (DataplaneControl) and the port backends it opens ports
// on: vhost-user ports on the vhost library (no ethdev each), DPDK vdevs as
// ethdevs. Partial offload on a pod's port (offload-port, tests and
// benchmarks) marks packets in an ethdev's rx path: then pod ports are
// net_vhost ethdevs, as many as RTE_MAX_ETHPORTS allows. Main thread only;
// the core runs threads of its own between start() and stopWhilePmdsRun().
#pragma once

#include "dataplane/config/config.h"
#include "dataplane/core/checkpoint.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/dpdk_port_backend.h"
#include "dataplane/core/split_port_backend.h"
#include "dataplane/core/vhost_port_backend.h"
#include "dataplane/sluiced/eal_session.h"
#include "dataplane/sluiced/pmd_fleet.h"

namespace sluice {

class ControlCore {
 public:
  // The backends and the core, not started: features register with it first.
  ControlCore(const SluicedConfig& config, const EalSession& eal, const PmdFleet& pmds);
  ControlCore(const ControlCore&) = delete;
  ControlCore& operator=(const ControlCore&) = delete;

  DataplaneControl& control() { return control_; }

  // Starts the core's flow thread, then keeps the word given before a
  // restart: every checkpointed port comes back with its number and socket
  // before the API serves (so no CNI call can race the restore), pods that
  // went away meanwhile are collected, and the collector keeps on.
  void startAndRestore(CheckpointStore& checkpoint, const CheckpointLoad& loaded);
  // While the PMDs still run: stops the collector, closes the ports (leaving
  // the checkpoint: a restarted sluiced, e.g. a DaemonSet upgrade, restores
  // them for the pods still running), waits for the vhost library to let go
  // of the pods' sockets, and stops the flow thread.
  void stopWhilePmdsRun();

 private:
  const SluicedConfig& config_;
  VhostPortBackend vhost_ports_;
  DpdkPortBackend ethdev_ports_;
  SplitPortBackend backend_;  // pod ports to one of the two above, vdevs to ethdev_ports_
  DataplaneControl control_;
};

}  // namespace sluice
