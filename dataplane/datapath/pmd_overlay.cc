// The PMD's uplink step, apart from pmd.cc so that the overlay's
// hook into the pipeline is one call there. PMD lcore only.
#include <rte_ring.h>

#include <iterator>

#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/pmd.h"
#include "dataplane/datapath/tsan_dpdk.h"

namespace sluice {

uint16_t Pmd::uplinkRx(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now) {
  vxlan::UplinkRxOut& out = uplink_out_;
  const uint16_t kept = vxlan::uplinkRxBurst(snap_->overlay, pkts, n, tun_meta_, out);
  // Every packet not decapsulated was decided here, before any lookup.
  const uint16_t decided = static_cast<uint16_t>(n - kept);
  if (decided == 0) return kept;
  counters_.not_looked_up.add(decided);
  for (uint16_t i = 0; i < out.n_drop; ++i) {
    counters_.drops[static_cast<size_t>(out.reason[i])].inc();
  }
  if (out.n_drop != 0) {
    rte_pktmbuf_free_bulk(out.drop, out.n_drop);
    counters_.ports[in_port].rx_dropped.add(out.n_drop);
  }
  for (uint16_t i = 0; i < out.n_reply; ++i) enqueue(in_port, out.reply[i], now);
  return kept;
}

void Pmd::sendControlFrames(uint64_t now) {
  rte_mbuf* frames[8];
  const unsigned n =
      rte_ring_dequeue_burst(snap_->overlay.control_tx, reinterpret_cast<void**>(frames), std::size(frames), nullptr);
  for (unsigned i = 0; i < n; ++i) {
    takeOver(frames[i]);  // written by control
    enqueue(snap_->overlay.uplink_port, frames[i], now);
  }
}

uint16_t Pmd::externalRun(const flow::MegaflowActions& a, rte_mbuf* const* pkts, uint16_t count, uint16_t in_port,
                          uint64_t now) {
  // The uplink's MTU bounds the IP packet; the tag adds to the frame, not to it.
  uint32_t over = 0;
  for (uint16_t i = 0; i < count; ++i) over |= rte_pktmbuf_pkt_len(pkts[i]) > a.max_frame;
  if (over != 0) [[unlikely]]
    return outputOversize(a, pkts, count, in_port, now);
  uint16_t dropped = 0;
  for (uint16_t i = 0; i < count; ++i) dropped = static_cast<uint16_t>(dropped + !forwardOne(a, pkts[i], now));
  return dropped;
}

}  // namespace sluice
