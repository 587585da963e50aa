#include "dataplane/core/snapshot_publisher.h"

#include <chrono>
#include <thread>

#include "dataplane/core/control_module.h"
#include "dataplane/core/forwarding_state.h"
#include "dataplane/core/pmd_grace_period.h"
#include "dataplane/core/port_table.h"

namespace sluice {

SnapshotPublisher::SnapshotPublisher(std::vector<PmdContext*> pmds) : pmds_(std::move(pmds)), live_(pmds_.size()) {}

std::shared_ptr<PmdSnapshot> SnapshotPublisher::build(const SnapshotInputs& in, const PmdRxQueues& rx,
                                                      size_t p) const {
  auto snap = std::make_shared<PmdSnapshot>();
  snap->version = version_;
  snap->tx_ports.assign(in.ports.size(), TxPortSlot{});
  in.forwarding.fillSnapshot(*snap);
  snap->tx_flush_cycles = in.tx_flush_cycles;
  snap->settings = in.settings;
  in.ports.forEachPort([&](uint16_t n, const PortEntry& e) {
    if (!e.isPod()) {
      snap->tx_ports[n] = {e.dpdk.dpdk_port, 0, true, e.module_tx_lock};
      return;
    }
    // A tx queue of the PMD's own where the pod enabled one for every PMD;
    // else PMD p shares queue p mod their count, under that queue's lock
    // only if another PMD shares it too (or while they change over).
    const uint16_t usable = e.tx_usable;
    const auto queue = static_cast<uint16_t>(p % usable);
    const bool shared = e.tx_changing || queue + usable < pmds_.size();
    snap->tx_ports[n] = {e.dpdk.dpdk_port, queue, true, shared ? &e.tx_locks[queue] : nullptr, e.dpdk.vhost};
  });
  for (const auto& [n, queue] : rx[p]) {
    const PortEntry& e = *in.ports.find(n);
    snap->rx_queues.push_back({e.dpdk.dpdk_port, queue, n, e.dpdk.vhost});
  }
  for (const ControlModule* m : in.modules) m->fillSnapshot(*snap, p);
  return snap;
}

void SnapshotPublisher::publish(const SnapshotInputs& in, const PmdRxQueues& rx, Mutex& tables) {
  ++version_;
  std::vector<std::shared_ptr<const PmdSnapshot>> next(pmds_.size());
  for (size_t p = 0; p < pmds_.size(); ++p) next[p] = build(in, rx, p);
  for (size_t p = 0; p < pmds_.size(); ++p)
    pmds_[p]->mailbox.published.store(next[p].get(), std::memory_order_seq_cst);
  // A PMD that is not running holds no snapshot; one that starts after this
  // point reads the new one (seq_cst pairs with its store to `running`).
  // The wait is without the table lock: a PMD slow to reach its next loop
  // iteration delays this change (and the next), never a reader such as
  // ListPorts or GetStats. The writer lock keeps every table as it is.
  tables.unlock();
  for (const PmdContext* pmd : pmds_) {
    while (pmd->mailbox.running.load(std::memory_order_seq_cst) &&
           pmd->mailbox.acked_version.load(std::memory_order_acquire) < version_)
      std::this_thread::sleep_for(kPmdAckPollInterval);
  }
  tables.lock();
  // Every PMD now runs `next`: the previous snapshots can go.
  live_ = std::move(next);
}

bool SnapshotPublisher::polledElsewhere(uint16_t port_no, uint16_t queue, size_t pmd) const {
  for (size_t o = 0; o < pmds_.size(); ++o) {
    if (o == pmd || live_[o] == nullptr) continue;
    for (const RxQueueRef& r : live_[o]->rx_queues)
      if (r.port_no == port_no && r.queue == queue) return true;
  }
  return false;
}

void SnapshotPublisher::handOver(const SnapshotInputs& in, const PmdRxQueues& target, Mutex& tables) {
  PmdRxQueues interim(pmds_.size());
  bool moved = false;
  for (size_t p = 0; p < pmds_.size(); ++p) {
    for (const auto& [n, queue] : target[p]) {
      if (polledElsewhere(n, queue, p)) {
        moved = true;
      } else {
        interim[p].push_back({n, queue});
      }
    }
  }
  if (moved) publish(in, interim, tables);
  publish(in, target, tables);
}

}  // namespace sluice
