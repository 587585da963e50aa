// Which NUMA socket each PMD lcore runs on and which socket each port's
// memory is on: what rx queue placement and the mbuf pools per socket go by.
// An interface so that placement and pool choice are tested on a fake
// two-socket machine (tests/support/fake_numa_topology.h); the real one asks
// DPDK (dpdk_numa_topology.h). Control thread only.
#pragma once

#include <optional>

#include "dataplane/core/port_backend.h"

namespace sluice {

class NumaTopology {
 public:
  virtual ~NumaTopology() = default;
  // The socket lcore `lcore` runs on (0 on a machine of one socket).
  virtual unsigned lcoreSocket(unsigned lcore) const = 0;
  // The socket `port`'s memory is on (a NIC's: the PCI device's; a
  // vhost-user port's: the pod's memory, once the pod connected). None while
  // unknown: placement then treats the port as on any socket.
  virtual std::optional<unsigned> portSocket(const CreatedPort& port) const = 0;
};

}  // namespace sluice
