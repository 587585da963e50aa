#include "dataplane/sluiced/control_core.h"

#include <rte_cycles.h>

#include <chrono>

#include "common/log.h"

namespace sluice {
namespace {

bool podPortsAreEthdevs(const SluicedConfig& config) {
  const bool ethdevs = config.offload_provider != "off" && !config.offload_port.empty();
  if (ethdevs) logInfo("offload-port names a pod: vhost-user ports are net_vhost ethdevs");
  return ethdevs;
}

}  // namespace

ControlCore::ControlCore(const SluicedConfig& config, const EalSession& eal, const PmdFleet& pmds)
    : config_(config),
      vhost_ports_(pmds.mailboxes()),
      ethdev_ports_(eal.pools(), eal.topology()),
      backend_(podPortsAreEthdevs(config) ? static_cast<PortBackend&>(ethdev_ports_) : vhost_ports_, ethdev_ports_),
      control_(config, backend_, pmds.contexts(), rte_get_tsc_hz(), &eal.topology()) {}

void ControlCore::startAndRestore(CheckpointStore& checkpoint, const CheckpointLoad& loaded) {
  control_.start();
  control_.setCheckpointStore(&checkpoint);
  RestoreSummary r = control_.restore(loaded.state);
  if (loaded.found)
    logInfo("checkpoint ", checkpoint.path(), ": ", r.restored, " port(s) restored, ", r.dropped, " dropped, ",
            r.garbage_collected, " garbage-collected (pod netns gone)");
  control_.collectGarbage();
  control_.startGarbageCollector(std::chrono::milliseconds(config_.gc_interval_ms));
}

void ControlCore::stopWhilePmdsRun() {
  control_.stopGarbageCollector();
  control_.removeAllPorts();
  // The vhost library lets go of the pods' sockets on the backend's own
  // thread (within the sockets' timeouts); its memory goes with EAL.
  while (!vhost_ports_.waitUnregistered(std::chrono::seconds(5)))
    logWarning("shutdown: still waiting for the vhost library to release the pods' sockets");
  control_.stopFlowThread();
}

}  // namespace sluice
