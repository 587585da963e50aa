#include "dataplane/datapath/tsan_dpdk.h"

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include <cstring>

namespace sluice {

#ifdef SLUICE_TSAN_ACTIVE
namespace {

// DPDK's ring mempool ops, which the annotated ops forward to.
const rte_mempool_ops& ringOps() {
  static const rte_mempool_ops* ops = []() -> const rte_mempool_ops* {
    for (uint32_t i = 0; i < rte_mempool_ops_table.num_ops; ++i)
      if (std::strcmp(rte_mempool_ops_table.ops[i].name, "ring_mp_mc") == 0) return &rte_mempool_ops_table.ops[i];
    return nullptr;
  }();
  return *ops;
}

int annotatedAlloc(rte_mempool* mp) { return ringOps().alloc(mp); }
void annotatedFree(rte_mempool* mp) { ringOps().free(mp); }
unsigned annotatedCount(const rte_mempool* mp) { return ringOps().get_count(mp); }
int annotatedEnqueue(rte_mempool* mp, void* const* objs, unsigned n) {
  for (unsigned i = 0; i < n; ++i) __tsan_release(objs[i]);
  return ringOps().enqueue(mp, objs, n);
}
int annotatedDequeue(rte_mempool* mp, void** objs, unsigned n) {
  const int rc = ringOps().dequeue(mp, objs, n);
  if (rc == 0)
    for (unsigned i = 0; i < n; ++i) __tsan_acquire(objs[i]);
  return rc;
}

const rte_mempool_ops kAnnotatedOps = {
    .name = "tsan_ring_mp_mc",
    .alloc = annotatedAlloc,
    .free = annotatedFree,
    .enqueue = annotatedEnqueue,
    .dequeue = annotatedDequeue,
    .get_count = annotatedCount,
    .calc_mem_size = nullptr,
    .populate = nullptr,
    .get_info = nullptr,
    .dequeue_contig_blocks = nullptr,
};

uint16_t acquireReceived(uint16_t, uint16_t, rte_mbuf* pkts[], uint16_t n, uint16_t, void*) {
  for (uint16_t i = 0; i < n; ++i) __tsan_acquire(pkts[i]);
  return n;
}
uint16_t releaseSent(uint16_t, uint16_t, rte_mbuf* pkts[], uint16_t n, void*) {
  for (uint16_t i = 0; i < n; ++i) __tsan_release(pkts[i]);
  return n;
}

}  // namespace

const char* handoverPoolOps() {
  static const bool registered = rte_mempool_register_ops(&kAnnotatedOps) >= 0;
  return registered ? kAnnotatedOps.name : "ring_mp_mc";
}

bool annotatePortHandover(uint16_t dpdk_port) {
  return rte_eth_add_first_rx_callback(dpdk_port, 0, acquireReceived, nullptr) != nullptr &&
         rte_eth_add_tx_callback(dpdk_port, 0, releaseSent, nullptr) != nullptr;
}

#else

const char* handoverPoolOps() { return nullptr; }
bool annotatePortHandover(uint16_t) { return true; }

#endif

}  // namespace sluice
