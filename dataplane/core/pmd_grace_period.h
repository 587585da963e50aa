// Waiting until every running PMD has passed its quiescent point once, for
// state the PMDs read outside snapshots (PmdMailbox's grace period; see its
// comment for the memory order). Used where a snapshot cannot be published:
// the vhost library's callback that takes a device away runs on the
// library's thread, which must not take the control path's lock.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

// How often control re-checks a PMD's acknowledgement (of a snapshot, a
// classifier, a grace period). PMDs acknowledge at their next loop iteration
// (microseconds), so this bounds the added latency of a change, not its
// correctness.
inline constexpr auto kPmdAckPollInterval = std::chrono::microseconds(20);

// Returns once every PMD in `pmds` that is running has passed its quiescent
// point after this call began (a sleeping PMD when it wakes, within
// pmd-max-sleep-us); a stopped PMD is not waited for.
inline void waitForPmdGracePeriod(const std::vector<PmdMailbox*>& pmds) {
  std::vector<uint64_t> targets;
  targets.reserve(pmds.size());
  for (PmdMailbox* m : pmds) targets.push_back(m->grace_request.fetch_add(1, std::memory_order_seq_cst) + 1);
  for (size_t i = 0; i < pmds.size(); ++i) {
    // A PMD's loop takes microseconds; a sleeping one wakes within 10 ms.
    while (pmds[i]->running.load(std::memory_order_seq_cst) &&
           pmds[i]->grace_passed.load(std::memory_order_acquire) < targets[i])
      std::this_thread::sleep_for(kPmdAckPollInterval);
  }
}

}  // namespace sluice
