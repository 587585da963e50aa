// ThreadSanitizer and DPDK's libraries: sluiced built with TSan, and tests
// that run a PMD and its control threads in one process over ring ethdevs.
//
// DPDK's shared libraries are not built with -fsanitize=thread, so TSan does
// not see the synchronisation inside them: an mbuf written by one thread,
// passed through DPDK's code (a net_ring port's burst functions, a mempool's
// ring) and read by another looks to TSan like two unordered accesses. Those
// hand-overs are DPDK's guarantee (its rings publish and consume in order), so
// these helpers state them to TSan where instrumented code meets DPDK's:
//   - a mempool ops "ring_mp_mc" + release of every object put, acquire of
//     every object got (mbufs freed on one thread, allocated on another);
//   - rx/tx callbacks on a port (run by the inline rte_eth_rx_burst and
//     rte_eth_tx_burst, i.e. in the PMD's instrumented code) that acquire
//     every packet received and release every packet sent;
//   - handOver()/takeOver() for an mbuf put into a ring by one thread and
//     taken out by another (ARP punts, a test's own side of a ring port).
// vhost-user ports on the vhost library (vhost_port.h) need nothing more:
// the library copies, so a received mbuf comes from the pool (the ops above)
// and a sent one is freed by the PMD that sent it; what passes between the
// library's thread and a PMD is the device's id and vring bits, which are
// atomics of ours.
// Without TSan the pool ops are DPDK's default and everything else does
// nothing.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "common/thread_sanitizer.h"

namespace sluice {

// Mempool ops name for rte_pktmbuf_pool_create_by_ops (call after
// rte_eal_init); null (DPDK's default ops) without TSan.
const char* handoverPoolOps();
// Installs the acquire/release callbacks on queue 0 of a ring ethdev (before
// the PMD polls it; rx first, ahead of any callback a test adds later).
// False if DPDK refused.
bool annotatePortHandover(uint16_t dpdk_port);

// Before an mbuf goes into a ring another thread takes it from.
inline void handOver(const rte_mbuf* m) { tsanRelease(m); }
// After an mbuf came out of a ring another thread put it into.
inline void takeOver(const rte_mbuf* m) { tsanAcquire(m); }

}  // namespace sluice
