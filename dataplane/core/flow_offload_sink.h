// What FlowControl tells partial offload about megaflows (an interface so
// FlowControl stays testable without an offload thread). Control path:
// called by FlowControl within the control core's changes; implementations
// must only record the event and return (no waiting on PMDs or devices).
#pragma once

#include <cstdint>
#include <string>

#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"

namespace sluice::offload {

class FlowOffloadSink {
 public:
  virtual ~FlowOffloadSink() = default;
  // Whether megaflows upcalled from this in-port are to be offloaded.
  virtual bool wantsInPort(uint16_t in_port) const = 0;
  // Megaflow `index` of PMD `pmd` (at `generation`, with `mask`) exists and
  // packets from an offload in-port need it; `upcall_key` is the key of the
  // packet that asked for it (its in-port, its tunnel metadata). May be
  // repeated for the same megaflow.
  virtual void flowInstalled(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation,
                             const flow::FlowKey& upcall_key, const flow::FlowMask& mask,
                             const flow::MegaflowActions& actions) = 0;
  // The megaflow is being killed (revalidated away, expired): its rule must go.
  virtual void flowRemoved(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation) = 0;
  // `sluicectl flows`: "yes", "no (<reason>)", "failed (<reason>)", "pending",
  // or "" when the megaflow was never offered for offload.
  virtual std::string flowState(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation) const = 0;
};

}  // namespace sluice::offload
