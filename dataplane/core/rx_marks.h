// Whether a port delivers NIC flow marks (partial offload) is negotiated
// with its driver before the port is configured; whoever opens a port asks
// then, and the offload provider reads the answer when it attaches later.
// Control path only; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace sluice::offload {

// rte_eth_rx_metadata_negotiate for user marks, recorded for the port;
// returns its result (0, -ENOTSUP, ...). Call before rte_eth_dev_configure.
int negotiateUserMarksBeforeConfigure(uint16_t dpdk_port);

// The recorded answer for the port (result, features), if it was asked.
std::optional<std::pair<int, uint64_t>> negotiatedUserMarks(uint16_t dpdk_port);

// Forgets the answer (the port id may later name another device).
void forgetUserMarks(uint16_t dpdk_port);

}  // namespace sluice::offload
