// The real NumaTopology: DPDK's view of the machine (EAL must be up).
// Control thread only.
#pragma once

#include "dataplane/core/numa_topology.h"

namespace sluice {

class DpdkNumaTopology final : public NumaTopology {
 public:
  // rte_lcore_to_socket_id (0 where EAL knows no socket for the lcore).
  unsigned lcoreSocket(unsigned lcore) const override;
  // A net_vhost port: rte_vhost_get_numa_node of its vhost device, none
  // while no pod is connected. Any other ethdev: rte_eth_dev_socket_id, none
  // when DPDK says SOCKET_ID_ANY (a device of no NUMA node).
  std::optional<unsigned> portSocket(uint16_t dpdk_port) const override;
};

}  // namespace sluice
