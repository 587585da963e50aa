// The real NumaTopology: DPDK's view of the machine (EAL must be up).
// Control thread only.
#pragma once

#include "dataplane/core/numa_topology.h"

namespace sluice {

class DpdkNumaTopology final : public NumaTopology {
 public:
  // rte_lcore_to_socket_id (0 where EAL knows no socket for the lcore).
  unsigned lcoreSocket(unsigned lcore) const override;
  // A vhost-user port (the vhost library's or a net_vhost ethdev):
  // rte_vhost_get_numa_node of its pod's device, none while no pod is
  // connected. Any other ethdev: rte_eth_dev_socket_id, none when DPDK says
  // SOCKET_ID_ANY (a device of no NUMA node).
  std::optional<unsigned> portSocket(const CreatedPort& port) const override;
};

}  // namespace sluice
