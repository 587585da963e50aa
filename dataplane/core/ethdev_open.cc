#include "dataplane/core/ethdev_open.h"

#include <absl/strings/str_cat.h>
#include <rte_errno.h>

namespace sluice {
namespace {

absl::Status dpdkError(const char* step, int rc) {
  return absl::InternalError(absl::StrCat(step, ": ", rte_strerror(rc < 0 ? -rc : rc)));
}

absl::Status openQueues(uint16_t port, uint16_t queues, const rte_eth_conf& conf, rte_mempool* pool,
                        uint16_t descriptors, absl::FunctionRef<absl::Status()> before_start) {
  if (int rc = rte_eth_dev_configure(port, queues, queues, &conf); rc != 0)
    return dpdkError("configuring the port", rc);
  const int socket = rte_eth_dev_socket_id(port);
  for (uint16_t q = 0; q < queues; ++q) {
    if (int rc = rte_eth_rx_queue_setup(port, q, descriptors, socket, nullptr, pool); rc != 0)
      return dpdkError("setting up its rx queue", rc);
    if (int rc = rte_eth_tx_queue_setup(port, q, descriptors, socket, nullptr); rc != 0)
      return dpdkError("setting up its tx queue", rc);
  }
  if (absl::Status s = before_start(); !s.ok()) return s;
  if (int rc = rte_eth_dev_start(port); rc != 0) {
    rte_eth_dev_close(port);
    return dpdkError("starting the port", rc);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status openEthdev(uint16_t port, const rte_eth_conf& conf, rte_mempool* pool, uint16_t descriptors,
                        absl::FunctionRef<absl::Status()> before_start) {
  return openQueues(port, 1, conf, pool, descriptors, before_start);
}

absl::Status openEthdevQueues(uint16_t port, uint16_t queues, const rte_eth_conf& conf, rte_mempool* pool) {
  return openQueues(port, queues, conf, pool, kEthdevDescriptors, [] { return absl::OkStatus(); });
}

}  // namespace sluice
