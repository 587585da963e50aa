// The software flow engine's control side: an OffloadProvider that keeps the
// rules itself and applies them in an rx callback on the port
// (sw_engine_rx.h), marking packets as a NIC would. It
// stands in for hardware on ports without a flow engine, for tests and
// demos: selected only by configuration (provider "software"), and every
// probe logs loudly that this is not hardware offload.
//
// It accepts the patterns the translator produces for IPv4/IPv6 (ETH, IPV4,
// IPV6, UDP, TCP, ICMP; TTL as one of the classes 0, 1, 2..255) and VXLAN
// tunnel patterns (outer ETH / IPV4 / UDP dst 4789 / VXLAN, then inner items
// as above) and compiles each into a masked flow key; anything else is
// refused (ENOTSUP), like a NIC without that feature. Serves one port.
//
// Tunnel rules: the outer source, destination and VNI go to the key's
// tun_src / tun_dst / tun_vni, the inner headers to its ordinary fields, and
// the outer facts a pattern may require (version_ihl 0x45, no fragment,
// VXLAN flags 0x08) to bits of the engine's layer word (sw_engine_rx.h),
// which also keeps plain rules from matching inner headers and tunnel rules
// from matching plain frames.
//
// Control path only. Rule changes go into an unpublished classifier version;
// sync() publishes it (release), waits until the callback of every queue
// has passed a version that contains the change (see sw_engine_rx.h), then
// frees the old versions and recycles destroyed rules' records.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "dataplane/modules/offload/offload_provider.h"
#include "dataplane/stand_ins/software_offload/sw_engine_rx.h"

struct rte_eth_rxtx_callback;

namespace sluice::offload {

// A pattern compiled to what the software engine matches.
struct CompiledRule {
  flow::FlowKey key;
  flow::FlowMask mask;
};
// ENOTSUP-like Unimplemented for a pattern the engine cannot match exactly.
absl::StatusOr<CompiledRule> compileSoftwareRule(const FlowPattern& pattern);

class SoftwareProvider final : public OffloadProvider {
 public:
  // capacity: rules at most (and marks below it).
  explicit SoftwareProvider(uint32_t capacity);
  ~SoftwareProvider() override;

  const char* name() const override { return "software"; }
  ProviderCaps caps() const override { return {true, true, true, true}; }
  Capability probe(uint16_t dpdk_port, uint16_t rx_queues) override;
  void detach(uint16_t dpdk_port) override;
  absl::Status validate(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) override;
  absl::StatusOr<RuleHandle> create(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) override;
  absl::Status destroy(uint16_t dpdk_port, RuleHandle rule) override;
  absl::Status flush(uint16_t dpdk_port) override;
  bool sync() override;
  void selfCost(uint64_t* cycles, uint64_t* packets) const override;

  // Packets the callback marked (all queues), for tests and stats.
  uint64_t packetsMarked() const;
  uint32_t rules() const { return rules_.size(); }
  // For tests without an ethdev: the state the callback reads.
  SwEngineShared& shared() { return *shared_; }

 private:
  absl::Status checkPort(uint16_t dpdk_port) const;
  flow::Classifier& editable();

  uint32_t capacity_;
  flow::MegaflowTable rules_;
  std::unique_ptr<SwEngineShared> shared_;
  std::optional<uint16_t> port_;
  uint16_t rx_queues_ = 0;
  std::vector<const rte_eth_rxtx_callback*> callbacks_;
  // Published versions still possibly read, newest last; and the edits since.
  std::vector<std::unique_ptr<SwRuleSet>> sets_;
  std::vector<std::unique_ptr<flow::Classifier>> classifiers_;  // parallel to sets_
  std::unique_ptr<flow::Classifier> next_;
  std::vector<flow::MegaflowIndex> killed_;  // recycled after the next complete sync
  uint64_t version_ = 0;
  uint32_t tunnel_rules_ = 0;  // live tunnel rules in next_ (or the newest version)
};

}  // namespace sluice::offload
