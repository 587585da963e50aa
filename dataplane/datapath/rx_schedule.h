// Which of its rx queues a PMD polls in each loop iteration (PMD thread only).
//
// An empty poll is not free: a vhost-user queue's takes the vring's access
// lock and reads the guest's avail index, several cache lines. A node holds
// hundreds of pod ports, most of them silent at any moment, and polling all
// of them every iteration would cost the few busy ones more than their own
// packets. So a queue is busy or idle:
//   busy  polled every iteration. One that returned nothing in
//         kRxIdleAfterEmptyPolls polls in a row becomes idle.
//   idle  polled in turn: a round-robin cursor visits at most
//         kRxIdlePollsPerIteration idle queues per iteration, so an
//         iteration's scan is bounded whatever the port count. A round that
//         has lasted longer than the revisit interval is finished in the
//         iteration that finds it late (every idle queue polled then), so an
//         idle queue is polled again within about twice that interval plus
//         two iterations (a sleep of pmd-max-sleep-us included) wherever
//         its turn falls. One that returns packets is busy again at once.
// (Open vSwitch polls every queue each iteration; VPP moves an idle
// interface's queues to interrupt mode, which virtio/vhost can signal and
// ethdevs in general cannot: polling in turn needs nothing of the driver.)
//
// State is per queue of the PMD's snapshot, in the snapshot's order; a new
// snapshot keeps the state of the queues it shares with the previous one
// (a port added or removed does not make every other idle queue busy), and
// its new queues start busy, so a new pod's first packets are not delayed.
// The arrays are reserved when the PMD is made for its port table's ports
// (max-ports) of kMaxQueuesPerPort queues, so picking up a snapshot allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/pmd_counters.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

// Empty polls in a row after which a queue is idle. 1024 iterations are
// ~10 ms of a PMD forwarding full bursts (~10 µs per iteration with two busy
// pods) and ~1 ms of an empty one: a pod sending even 1000 packets per
// second stays busy (never waits for its turn), and a queue that went
// silent costs full polls for only that long.
inline constexpr uint16_t kRxIdleAfterEmptyPolls = 1024;

// Idle queues polled per iteration. An empty poll of a connected vhost-user
// queue costs 34-52 cycles here (bench/rx_idle/empty_poll_bench: 1 to 15
// queues in turn; ~20 each when sluiced polled 225 of them per iteration,
// bench/rx_idle/idle_ports.sh), an iteration forwarding one full burst
// ~12,000 (32 packets at ~380 cycles): 8 polls are ~3 % of it, and visit
// 500 idle queues in 63 iterations.
inline constexpr uint16_t kRxIdlePollsPerIteration = 8;

// The longest one round over the idle queues may take before the rest of
// it is polled at once: 1 ms. An idle queue is then polled at least every
// ~2 ms (plus a sleep), well under any retransmission timer, while at
// full load 500 idle queues cost at most 500 polls per ms (~25,000 cycles:
// about 1 % of a core).
inline constexpr uint32_t kRxIdleRevisitUs = 1000;

class RxSchedule {
 public:
  // tsc_hz: the TSC's rate (0: every round is late, every idle queue is
  // polled every iteration, as without a clock).
  RxSchedule(PmdCounters& counters, uint64_t tsc_hz)
      : counters_(counters), revisit_cycles_(tsc_hz / 1'000'000 * kRxIdleRevisitUs) {
    const size_t most = counters.ports.size() * kMaxQueuesPerPort;
    for (auto* v : {&empty_polls_, &carried_, &busy_, &idle_}) v->reserve(most);
  }

  // At the PMD's quiescent point: `next` (the new snapshot's queues)
  // replaces `previous` (the old one's, still alive, or empty). Queues in
  // both keep their state.
  void assign(std::span<const RxQueueRef> previous, std::span<const RxQueueRef> next) {
    queues_ = next.data();
    // Within what the constructor reserved unless this PMD was given more
    // queues than that; the fast path then never grows these.
    busy_.reserve(next.size());
    idle_.reserve(next.size());
    carried_.assign(next.size(), 0);
    // Snapshots list queues in one order (ports ascending), so the previous
    // match's successor is tried first: adding or removing a port costs a
    // search per queue that changed, not per queue.
    size_t hint = 0;
    for (size_t i = 0; i < next.size(); ++i) {
      size_t found = previous.size();
      if (hint < previous.size() && same(previous[hint], next[i])) {
        found = hint;
      } else {
        for (size_t j = 0; j < previous.size(); ++j)
          if (same(previous[j], next[i])) {
            found = j;
            break;
          }
      }
      if (found == previous.size()) continue;
      carried_[i] = empty_polls_[found];
      hint = found + 1;
    }
    std::swap(empty_polls_, carried_);
    busy_.clear();
    idle_.clear();
    for (size_t i = 0; i < next.size(); ++i)
      (empty_polls_[i] >= kRxIdleAfterEmptyPolls ? idle_ : busy_).push_back(static_cast<uint16_t>(i));
    cursor_ = 0;
    round_start_ = 0;  // the first round's end is not waited for
  }

  // One loop iteration at TSC `now`: every busy queue, then idle ones in
  // turn. poll(const RxQueueRef&) receives and processes a burst and
  // returns how many packets it had. Returns whether every queue polled
  // returned under half a burst (the PMD may rest).
  template <typename Poll>
  bool pollOnce(uint64_t now, Poll&& poll) {
    bool light = true;
    // A queue that turns idle is swapped with the last busy one, which is
    // then polled at its place (each busy queue once per iteration).
    for (size_t i = 0; i < busy_.size();) {
      const uint16_t q = busy_[i];
      const uint16_t n = poll(queues_[q]);
      light &= n < kBurstSize / 2;
      if (n != 0) {
        empty_polls_[q] = 0;
      } else if (++empty_polls_[q] == kRxIdleAfterEmptyPolls) {
        busy_[i] = busy_.back();
        busy_.pop_back();
        idle_.push_back(q);  // behind the cursor's round: visited in this one
        counters_.rxq_idled.inc();
        continue;
      }
      ++i;
    }
    if (!idle_.empty()) light &= pollIdle(now, poll);
    return light;
  }

  size_t busyCount() const { return busy_.size(); }
  size_t idleCount() const { return idle_.size(); }

 private:
  static bool same(const RxQueueRef& a, const RxQueueRef& b) {
    return a.port_no == b.port_no && a.queue == b.queue && a.dpdk_port == b.dpdk_port;
  }

  template <typename Poll>
  bool pollIdle(uint64_t now, Poll& poll) {
    bool light = true;
    const size_t before = idle_.size();
    // A late round is finished now: whatever is left of it.
    const size_t budget = now - round_start_ >= revisit_cycles_ ? before : kRxIdlePollsPerIteration;
    size_t polled = 0;
    while (polled < budget && cursor_ < idle_.size()) {
      const uint16_t q = idle_[cursor_];
      const uint16_t n = poll(queues_[q]);
      ++polled;
      if (n == 0) {
        ++cursor_;
        continue;
      }
      light &= n < kBurstSize / 2;
      // Busy again; the last idle queue takes its place (and its turn: the
      // cursor stays).
      empty_polls_[q] = 0;
      idle_[cursor_] = idle_.back();
      idle_.pop_back();
      busy_.push_back(q);
      counters_.rxq_woken.inc();
    }
    if (cursor_ >= idle_.size()) {
      cursor_ = 0;
      round_start_ = now;
    }
    counters_.rxq_idle_polls.add(polled);
    if (before > polled) counters_.rxq_idle_polls_skipped.add(before - polled);
    return light;
  }

  PmdCounters& counters_;
  const uint64_t revisit_cycles_;  // kRxIdleRevisitUs in TSC cycles
  const RxQueueRef* queues_ = nullptr;  // the snapshot's queues
  // Per snapshot queue: empty polls in a row (kRxIdleAfterEmptyPolls and
  // over: idle); carried_ is assign()'s scratch for the next snapshot's.
  std::vector<uint16_t> empty_polls_;
  std::vector<uint16_t> carried_;
  std::vector<uint16_t> busy_;  // indices of the busy queues, in polling order
  std::vector<uint16_t> idle_;  // indices of the idle queues, in turn order
  size_t cursor_ = 0;           // the next idle_ entry of the round
  uint64_t round_start_ = 0;    // TSC when the current round began
};

}  // namespace sluice
