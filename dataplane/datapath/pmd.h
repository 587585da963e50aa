// A PMD (poll-mode driver) thread: polls its rx queues, runs each burst
// through the pipeline and sends the results in per-port output batches.
// Runs on one dedicated lcore; everything it touches is either its own (this
// object, its counters) or an immutable snapshot (see pmd_snapshot.h). No heap,
// locks (except a shared tx queue's, see TxPortSlot), exceptions or syscalls.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>

#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/pmd_counters.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

class Pmd {
 public:
  Pmd(PmdMailbox& mailbox, PmdCounters& counters) : mailbox_(mailbox), counters_(counters) {}

  // The poll loop; returns when the mailbox's stop flag is set, after
  // flushing every batch. Suitable for rte_eal_remote_launch via launch().
  void run();
  static int launch(void* pmd);

 private:
  // Packets waiting for one output port. Indexed by port number.
  struct TxBatch {
    uint16_t count = 0;
    uint64_t first_tsc = 0;  // when the oldest packet entered (for tx-flush-interval)
    rte_mbuf* pkts[kBurstSize];
  };

  void pickUpSnapshot();
  void processBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now);
  void enqueue(uint16_t port_no, rte_mbuf* m, uint64_t now);
  void flush(uint16_t port_no);
  void flushAll();
  void flushExpired(uint64_t now);

  PmdMailbox& mailbox_;
  PmdCounters& counters_;
  const PmdSnapshot* snap_ = nullptr;
  // Bit p set: batches_[p] is not empty. kMaxPorts == 32 fits one word, so
  // flushing visits only the ports that have something to send.
  uint32_t pending_ = 0;
  static_assert(kMaxPorts <= 32);
  std::array<TxBatch, kMaxPorts> batches_{};
};

}  // namespace sluice
