// A vhost-user port served by DPDK's vhost library directly, without an
// ethdev (as Open vSwitch serves its vhost-user ports): what a PMD needs to
// receive from and send to the pod behind it, and the two burst functions it
// calls instead of rte_eth_rx_burst / rte_eth_tx_burst.
//
// Written by the vhost library's callbacks (the control side,
// dataplane/core/vhost_port_backend.cc), read by the PMDs that poll or send
// on the port. Hand-over:
//  - new_device publishes the device's id in `vid` (release) once the pod's
//    memory is mapped and its vrings are set up; a PMD acquire-loads it per
//    burst, so one atomic load is all an unconnected port costs.
//  - destroy_device stores -1 and waits until every running PMD has passed
//    its quiescent point (PmdMailbox's grace period) before it returns and
//    the library unmaps the pod's memory: a PMD never uses a vid across its
//    quiescent point.
//  - `ready_vrings` only keeps the PMDs from asking for vrings the pod never
//    set up (the library logs an error for each such call); a vring being
//    disabled while a PMD uses it is the library's to handle (it checks
//    under the vring's own lock).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_vhost.h>

#include <atomic>
#include <cstdint>

namespace sluice {

struct alignas(64) VhostPort {
  // The connected device's id; -1 while no pod is connected (or it is going away).
  std::atomic<int> vid{-1};
  // Bit v set: the pod enabled vring v (even: the pod's receive vring of
  // queue pair v/2, which we send on; odd: its transmit vring, which we
  // receive from). A port has at most 16 queue pairs (32 vrings).
  std::atomic<uint64_t> ready_vrings{0};
  // The NUMA node of the pod's memory while it is connected, -1 otherwise
  // (rte_vhost_get_numa_node, read when it connects): for control's rx
  // queue placement. PMDs never read it.
  std::atomic<int> numa_node{-1};
};

// The vring index of queue pair `queue` in one direction (virtio-net's
// numbering: the guest's rx vring first, then its tx vring).
constexpr uint32_t vhostGuestRxVring(uint16_t queue) { return 2U * queue; }
constexpr uint32_t vhostGuestTxVring(uint16_t queue) { return 2U * queue + 1; }

// Up to `n` packets the pod sent on queue pair `queue`, copied into mbufs of
// `pool`; 0 while no pod is connected.
inline uint16_t vhostReceive(const VhostPort& port, uint16_t queue, rte_mempool* pool, rte_mbuf** pkts, uint16_t n) {
  const int vid = port.vid.load(std::memory_order_acquire);
  if (vid < 0) return 0;
  const uint32_t vring = vhostGuestTxVring(queue);
  if (vring >= 64 || ((port.ready_vrings.load(std::memory_order_relaxed) >> vring) & 1) == 0) return 0;
  return rte_vhost_dequeue_burst(vid, static_cast<uint16_t>(vring), pool, pkts, n);
}

// Sends pkts[0..n) to the pod on queue pair `queue`, with rte_eth_tx_burst's
// contract: returns how many were taken (the library copies them into the
// pod's buffers, so they are freed here); pkts[sent..n) stay the caller's.
inline uint16_t vhostSend(const VhostPort& port, uint16_t queue, rte_mbuf** pkts, uint16_t n) {
  const int vid = port.vid.load(std::memory_order_acquire);
  if (vid < 0) return 0;
  const uint32_t vring = vhostGuestRxVring(queue);
  if (vring >= 64 || ((port.ready_vrings.load(std::memory_order_relaxed) >> vring) & 1) == 0) return 0;
  const uint16_t sent = rte_vhost_enqueue_burst(vid, static_cast<uint16_t>(vring), pkts, n);
  rte_pktmbuf_free_bulk(pkts, sent);
  return sent;
}

}  // namespace sluice
