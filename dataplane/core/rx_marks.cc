#include "dataplane/core/rx_marks.h"

#include <rte_ethdev.h>

#include <map>
#include <mutex>

namespace sluice::offload {
namespace {

// Negotiation answers given before configure: port -> (rc, features).
std::mutex g_negotiated_mu;
std::map<uint16_t, std::pair<int, uint64_t>> g_negotiated;

}  // namespace

int negotiateUserMarksBeforeConfigure(uint16_t dpdk_port) {
  uint64_t features = RTE_ETH_RX_METADATA_USER_MARK;
  const int rc = rte_eth_rx_metadata_negotiate(dpdk_port, &features);
  std::lock_guard lock(g_negotiated_mu);
  g_negotiated[dpdk_port] = {rc, features};
  return rc;
}

std::optional<std::pair<int, uint64_t>> negotiatedUserMarks(uint16_t dpdk_port) {
  std::lock_guard lock(g_negotiated_mu);
  auto it = g_negotiated.find(dpdk_port);
  if (it == g_negotiated.end()) return std::nullopt;
  return it->second;
}

void forgetUserMarks(uint16_t dpdk_port) {
  std::lock_guard lock(g_negotiated_mu);
  g_negotiated.erase(dpdk_port);
}

}  // namespace sluice::offload
