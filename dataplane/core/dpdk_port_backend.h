// The real PortBackend: vhost-user ports as hot-plugged `net_vhost` vdevs,
// and DPDK vdevs standing in for pods. Control thread only (DPDK's hot-plug
// calls are not for PMD threads).
#pragma once

#include <rte_mempool.h>

#include "dataplane/core/port_backend.h"

namespace sluice {

// Whether DPDK's own argument parser (rte_kvargs_parse, which every vdev
// driver uses; no EAL needed) reads the arguments of `devargs` as exactly the
// key/value pairs sluiced validated (splitVdevDevargs): the last check before
// a driver sees them. InvalidArgument("devargs: ...") if not.
absl::Status checkDpdkReadsVdevArgs(const std::string& devargs);

class DpdkPortBackend final : public PortBackend {
 public:
  explicit DpdkPortBackend(rte_mempool* pool) : pool_(pool) {}

  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string& socket_path,
                                              bool client_mode) override;
  absl::StatusOr<CreatedPort> createVdev(uint16_t port_no, const std::string& devargs) override;
  void destroy(const CreatedPort& port) override;
  absl::Status setMtu(uint16_t dpdk_port, uint32_t mtu) override;
  bool linkUp(uint16_t dpdk_port) override;
  ByteCounts bytes(uint16_t dpdk_port) override;

 private:
  // Hot-plugs vdev `name` with `args`, one rx and one tx queue, started.
  absl::StatusOr<CreatedPort> createAndStart(const std::string& name, const std::string& args,
                                             const std::string& what);

  rte_mempool* pool_;
  // Makes every vdev name unique over the process's life: DPDK keeps a
  // removed vdev's name reserved until its teardown completes.
  uint64_t generation_ = 0;
};

}  // namespace sluice
