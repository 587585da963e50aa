#include "dataplane/datapath/pmd.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dataplane/datapath/l3_forward.h"

namespace sluice {

int Pmd::launch(void* pmd) {
  static_cast<Pmd*>(pmd)->run();
  return 0;
}

void Pmd::run() {
  // seq_cst here and on control's side of the hand-over (publish, then read
  // `running`): otherwise control could see us not running while we read a
  // stale snapshot pointer (the store→load pattern needs a full fence).
  mailbox_.running.store(true, std::memory_order_seq_cst);
  rte_mbuf* pkts[kBurstSize];
  while (!mailbox_.stop.load(std::memory_order_relaxed)) {
    // Quiescent point: no packet or snapshot pointer is held across it.
    if (mailbox_.published.load(std::memory_order_seq_cst) != snap_) pickUpSnapshot();
    if (snap_ == nullptr) continue;

    uint64_t start = rte_rdtsc();
    uint64_t now = start;
    uint32_t received = 0;
    for (const RxQueueRef& rxq : snap_->rx_queues) {
      uint16_t n = rte_eth_rx_burst(rxq.dpdk_port, rxq.queue, pkts, kBurstSize);
      if (n == 0) continue;
      received += n;
      now = rte_rdtsc();
      processBurst(rxq.port_no, pkts, n, now);
      if (snap_->tx_flush_cycles == 0) flushAll();
    }
    if (pending_ != 0) flushExpired(rte_rdtsc());
    uint64_t end = rte_rdtsc();
    if (received != 0) {
      counters_.busy_cycles.add(end - start);
      counters_.packets.add(received);
    } else {
      counters_.idle_cycles.add(end - start);
    }
  }
  flushAll();
  mailbox_.running.store(false, std::memory_order_release);
}

void Pmd::pickUpSnapshot() {
  // Packets batched under the old snapshot go out under it: its ports are
  // still open until control sees our acknowledgement below.
  flushAll();
  snap_ = mailbox_.published.load(std::memory_order_seq_cst);
  counters_.reloads.inc();
  mailbox_.acked_version.store(snap_ != nullptr ? snap_->version : 0, std::memory_order_release);
}

void Pmd::processBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now) {
  uint16_t next[kBurstSize];
  DropReason reason[kBurstSize];
  counters_.rx_bursts.inc();
  PortCounters& in = counters_.ports[in_port];
  in.rx_packets.add(n);
  uint16_t forwarded = l3ForwardBurst(*snap_, in_port, pkts, n, next, reason);
  if (forwarded != n) in.rx_dropped.add(n - forwarded);
  for (uint16_t i = 0; i < n; ++i) {
    if (next[i] == kNextDrop) {
      counters_.drops[static_cast<size_t>(reason[i])].inc();
      rte_pktmbuf_free(pkts[i]);
    } else {
      enqueue(next[i], pkts[i], now);
    }
  }
}

void Pmd::enqueue(uint16_t port_no, rte_mbuf* m, uint64_t now) {
  TxBatch& b = batches_[port_no];
  if (b.count == 0) {
    b.first_tsc = now;
    pending_ |= 1u << port_no;
  }
  b.pkts[b.count++] = m;
  if (b.count == kBurstSize) flush(port_no);
}

void Pmd::flush(uint16_t port_no) {
  TxBatch& b = batches_[port_no];
  pending_ &= ~(1u << port_no);
  uint16_t count = b.count;
  b.count = 0;
  const TxPortSlot& slot = snap_->tx_ports[port_no];
  PortCounters& out = counters_.ports[port_no];
  if (!slot.valid) {
    // The route pointed at a port that this snapshot no longer has (it can
    // only happen if a forwarding table and port set disagree).
    counters_.drops[static_cast<size_t>(DropReason::kPortGone)].add(count);
    out.tx_dropped.add(count);
    rte_pktmbuf_free_bulk(b.pkts, count);
    return;
  }
  if (slot.lock != nullptr) rte_spinlock_lock(slot.lock);
  uint16_t sent = rte_eth_tx_burst(slot.dpdk_port, slot.queue, b.pkts, count);
  if (slot.lock != nullptr) rte_spinlock_unlock(slot.lock);
  counters_.tx_batches.inc();
  counters_.tx_batched.add(count);
  counters_.tx_packets.add(sent);
  out.tx_packets.add(sent);
  if (sent != count) {
    uint16_t refused = static_cast<uint16_t>(count - sent);
    counters_.drops[static_cast<size_t>(DropReason::kTxQueueFull)].add(refused);
    out.tx_dropped.add(refused);
    rte_pktmbuf_free_bulk(b.pkts + sent, refused);
  }
}

void Pmd::flushAll() {
  while (pending_ != 0) flush(static_cast<uint16_t>(__builtin_ctz(pending_)));
}

void Pmd::flushExpired(uint64_t now) {
  uint32_t ports = pending_;
  while (ports != 0) {
    auto port_no = static_cast<uint16_t>(__builtin_ctz(ports));
    ports &= ports - 1;
    if (now - batches_[port_no].first_tsc >= snap_->tx_flush_cycles) flush(port_no);
  }
}

}  // namespace sluice
