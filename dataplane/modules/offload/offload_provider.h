// The NIC flow engine behind partial offload, as a small interface
// with two implementations: RteFlowProvider (DPDK rte_flow on the real port)
// and SoftwareProvider (an rx-callback engine standing in for the hardware,
// for tests and demos). Rules have one shape: pattern -> MARK(id) + RSS.
// Control path only: called by the offload thread and, for attach/detach,
// by DataplaneControl; never concurrently (OffloadManager serialises).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <string>

#include "dataplane/modules/offload/flow_pattern.h"
#include "dataplane/modules/offload/match_translate.h"

namespace sluice::offload {

// The answer of the one-time capability probe of a port.
struct Capability {
  bool supported = false;
  std::string reason;  // why not (or, when supported, how: e.g. "software engine")
};

// A created rule (provider-specific; 0 is never a valid handle).
using RuleHandle = uintptr_t;

class OffloadProvider {
 public:
  virtual ~OffloadProvider() = default;
  // "rte_flow" or "software".
  virtual const char* name() const = 0;
  virtual ProviderCaps caps() const = 0;

  // Once per port, before any rule: can this port mark packets? A port that
  // says no gets no rules.
  virtual Capability probe(uint16_t dpdk_port, uint16_t rx_queues) = 0;
  // The port goes away: every rule is destroyed and the provider lets go of it.
  virtual void detach(uint16_t dpdk_port) = 0;

  virtual absl::Status validate(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) = 0;
  virtual absl::StatusOr<RuleHandle> create(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) = 0;
  virtual absl::Status destroy(uint16_t dpdk_port, RuleHandle rule) = 0;
  virtual absl::Status flush(uint16_t dpdk_port) = 0;

  // Makes the creates and destroys so far take effect on received packets and
  // returns true once no packet marked by a destroyed rule can still reach
  // the PMD (marks of destroyed rules may then be reused); false if that
  // could not be established (the caller keeps those marks unused).
  virtual bool sync() = 0;

  // A software stand-in's own per-packet work (TSC cycles, packets it
  // looked at), which runs on the PMD; zero for hardware.
  virtual void selfCost(uint64_t* cycles, uint64_t* packets) const {
    *cycles = 0;
    *packets = 0;
  }
};

}  // namespace sluice::offload
