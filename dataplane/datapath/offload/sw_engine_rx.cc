// The software flow engine's rx callback (see sw_engine_rx.h). PMD thread.
#include "dataplane/datapath/offload/sw_engine_rx.h"

#include <rte_cycles.h>

#include <algorithm>

#include "dataplane/datapath/flow/flow_key.h"

namespace sluice::offload {

uint16_t swEngineMarkBurst(const SwRuleSet& rules, rte_mbuf** pkts, uint16_t n) {
  if (rules.classifier == nullptr || rules.classifier->size() == 0) return 0;
  uint16_t marked = 0;
  for (uint16_t base = 0; base < n; base += flow::kMaxBurst) {
    const uint16_t count = static_cast<uint16_t>(std::min<uint32_t>(n - base, flow::kMaxBurst));
    flow::FlowKey keys[flow::kMaxBurst];
    uint16_t idx[flow::kMaxBurst];
    flow::MegaflowIndex out[flow::kMaxBurst];
    uint32_t pending = 0;
    for (uint16_t i = 0; i < count; ++i) {
      const rte_mbuf* m = pkts[base + i];
      // The in-port is not part of a rule (a rule belongs to its port).
      if (flow::extractFlowKey(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), 0,
                               std::nullopt, keys[i]) == flow::ParseResult::kOk) {
        idx[pending++] = i;
      }
      out[i] = flow::kNoMegaflow;
    }
    if (pending == 0) continue;
    rules.classifier->lookupBurst(keys, idx, pending, out, *rules.rules);
    for (uint16_t i = 0; i < count; ++i) {
      if (out[i] == flow::kNoMegaflow) continue;
      rte_mbuf* m = pkts[base + i];
      m->hash.fdir.hi = rules.rules->at(out[i]).actions.arg;
      m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
      ++marked;
    }
  }
  return marked;
}

uint16_t swEngineRxCallback(uint16_t /*port_id*/, uint16_t queue, rte_mbuf* pkts[], uint16_t nb_pkts,
                            uint16_t /*max_pkts*/, void* user_param) {
  auto* shared = static_cast<SwEngineShared*>(user_param);
  if (queue >= kSwEngineMaxQueues) return nb_pkts;
  SwEngineShared::QueueState& q = shared->queues[queue];
  // Everything marked under the version read last time has been processed.
  if (q.seen.load(std::memory_order_relaxed) != q.reading) q.seen.store(q.reading, std::memory_order_release);
  const SwRuleSet* rules = shared->current.load(std::memory_order_acquire);
  q.reading = rules != nullptr ? rules->version : 0;
  q.polled.store(q.polled.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (nb_pkts == 0 || rules == nullptr) return nb_pkts;
  const uint64_t t0 = rte_rdtsc();
  const uint16_t marked = swEngineMarkBurst(*rules, pkts, nb_pkts);
  q.cycles.store(q.cycles.load(std::memory_order_relaxed) + (rte_rdtsc() - t0), std::memory_order_relaxed);
  q.packets.store(q.packets.load(std::memory_order_relaxed) + nb_pkts, std::memory_order_relaxed);
  if (marked != 0) q.marked.store(q.marked.load(std::memory_order_relaxed) + marked, std::memory_order_relaxed);
  return nb_pkts;
}

}  // namespace sluice::offload
