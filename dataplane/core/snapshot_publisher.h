// Hands the control's tables to the PMDs as immutable snapshots
// (pmd_snapshot.h): builds one per PMD, publishes them through each PMD's
// mailbox and waits until every running PMD acknowledged its new one, so
// that whatever the previous snapshots named (a removed port, a moved rx
// queue) is no PMD's any more when publish returns. Keeps what each PMD runs
// alive until it is replaced and acknowledged.
//
// Control thread only, within a change: DataplaneControl guards it with its
// writer lock, and the wait lets go of the table lock (passed in), so a PMD
// slow to reach its next loop iteration delays changes, never readers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/mutex.h"
#include "dataplane/core/rxq_placement.h"
#include "dataplane/datapath/pmd_context.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

class ControlModule;
class ForwardingState;
class PortTable;

// What every snapshot is made of besides each PMD's rx queues.
struct SnapshotInputs {
  const PortTable& ports;
  const ForwardingState& forwarding;
  uint64_t tx_flush_cycles = 0;  // tx-flush-interval in TSC cycles
  PmdSettings settings;
  const std::vector<ControlModule*>& modules;  // each fills its part
};

class SnapshotPublisher {
 public:
  // `pmds`: every PMD's context (outliving this).
  explicit SnapshotPublisher(std::vector<PmdContext*> pmds);

  // Publishes a snapshot with `rx[p]` as PMD p's rx queues; returns once
  // every running PMD acknowledged it at its quiescent point. `tables` (held)
  // is let go while waiting and held again on return.
  void publish(const SnapshotInputs& in, const PmdRxQueues& rx, Mutex& tables) ABSL_EXCLUSIVE_LOCKS_REQUIRED(tables);
  // Publishes `target`; an rx queue moving between PMDs must never be polled
  // by both at once, so when any moves, a snapshot where moved queues belong
  // to nobody goes first.
  void handOver(const SnapshotInputs& in, const PmdRxQueues& target, Mutex& tables)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(tables);

 private:
  std::shared_ptr<PmdSnapshot> build(const SnapshotInputs& in, const PmdRxQueues& rx, size_t pmd) const;
  // Whether queue `queue` of port `port_no` is in a PMD's live snapshot other than `pmd`'s.
  bool polledElsewhere(uint16_t port_no, uint16_t queue, size_t pmd) const;

  const std::vector<PmdContext*> pmds_;
  uint64_t version_ = 0;
  // What each PMD currently runs; kept alive here until replaced and acknowledged.
  std::vector<std::shared_ptr<const PmdSnapshot>> live_;
};

}  // namespace sluice
