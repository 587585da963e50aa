// The real offload provider: DPDK rte_flow on the port itself. The probe
// negotiates user-mark delivery (rte_eth_rx_metadata_negotiate with
// RTE_ETH_RX_METADATA_USER_MARK) and validates a representative rule
// (ETH / IPV4 dst -> MARK + RSS); rules are then validated and created one by
// one. On this machine's ports the probe says no (net_tap rejects MARK, the
// other vdevs have no flow ops) and gives the driver's reason.
// Control path only.
#pragma once

#include <map>

#include "dataplane/modules/offload/offload_provider.h"

namespace sluice::offload {

class RteFlowProvider final : public OffloadProvider {
 public:
  const char* name() const override { return "rte_flow"; }
  // Ranges, IPv6, VXLAN tunnel patterns and the fragment bits are left to
  // rte_flow_validate to accept or refuse, rule by rule (a refusal is
  // counted as a validate failure and the megaflow stays on the PMD).
  ProviderCaps caps() const override { return {true, true, true, true}; }
  Capability probe(uint16_t dpdk_port, uint16_t rx_queues) override;
  void detach(uint16_t dpdk_port) override;
  absl::Status validate(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) override;
  absl::StatusOr<RuleHandle> create(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) override;
  absl::Status destroy(uint16_t dpdk_port, RuleHandle rule) override;
  absl::Status flush(uint16_t dpdk_port) override;
  // A destroyed rule marks nothing new; packets it marked that still wait in
  // the rx ring are covered by the manager's FIFO reuse of marks (a freed
  // mark comes back only after every other free mark) and by the PMD's
  // generation check.
  bool sync() override { return true; }

 private:
  std::map<uint16_t, uint16_t> rx_queues_;  // per probed port
};

}  // namespace sluice::offload
