// DPDK's environment for one run of sluiced: the EAL, started on the placed
// lcores, and one mbuf pool per NUMA socket the PMDs run on. The session
// ends when the object goes: the pools are freed and the EAL is released,
// after everything made on them (PMDs, ports) has gone. Main thread only.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <optional>

#include "dataplane/config/config.h"
#include "dataplane/config/lcore_placement.h"
#include "dataplane/core/dpdk_numa_topology.h"
#include "dataplane/core/mbuf_pools.h"

namespace sluice {

class EalSession {
 public:
  // Starts the EAL (the configured eal-args beside the placement) and makes
  // the pools. An EAL that started is released again if the pools fail.
  static absl::StatusOr<std::unique_ptr<EalSession>> start(const SluicedConfig& config,
                                                           const LcorePlacement& placement);
  ~EalSession();
  EalSession(const EalSession&) = delete;
  EalSession& operator=(const EalSession&) = delete;

  const MbufPools& pools() const { return *pools_; }
  // Which NUMA socket each lcore and port is on, as the EAL sees it.
  const DpdkNumaTopology& topology() const { return topology_; }

 private:
  EalSession() = default;
  absl::Status makePools(const SluicedConfig& config);

  DpdkNumaTopology topology_;
  std::optional<MbufPools> pools_;  // empty until makePools succeeds
};

}  // namespace sluice
