// The PMD's partial-offload branch (Pmd::takeMarked, declared in pmd.h):
// packets that the NIC (or the software flow engine standing in for it)
// tagged with a mark go straight from the mark to their megaflow's actions,
// without key extraction or any cache lookup. PMD thread only: no heap,
// locks or syscalls.
//
// A packet is taken here only if all of this holds; otherwise it stays in
// the burst for the normal pipeline (and a mark that named nothing usable is
// counted in mark_misses):
//   - it arrived on the offload port and carries RTE_MBUF_F_RX_FDIR_ID;
//   - its mark names a megaflow of this PMD (mark_table.h);
//   - that megaflow is alive and of the generation the mark was made for
//     (a megaflow killed by revalidation is never used through a rule that
//     outlived it);
//   - for the L3 rewrite: the frame holds an untagged IPv4 header (what the
//     rewrite reads and writes; the rule matched ETH type 0x0800 without
//     VLAN, this only guards the rewrite against a NIC that matched looser).
#include <rte_ip.h>

#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/offload/mark_table.h"
#include "dataplane/datapath/pmd.h"

namespace sluice {
namespace {

// Ethernet header + minimal IPv4 header: what l3RewriteToPod touches.
constexpr uint32_t kMinL3Frame = RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr);

bool rewritable(const rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < kMinL3Frame) return false;
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  return (p[RTE_ETHER_HDR_LEN] >> 4) == 4;
}

}  // namespace

uint16_t Pmd::takeMarked(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now) {
  if (in_port != marks_->port()) return n;
  uint16_t rest = 0;
  uint32_t hits = 0, stale = 0, dropped = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) == 0) {
      pkts[rest++] = m;
      continue;
    }
    offload::MarkTarget t;
    if (!marks_->lookup(m->hash.fdir.hi, &t) || t.pmd != pmd_index_ ||
        t.megaflow >= megaflows_.capacity() || !megaflows_.isAlive(t.megaflow)) {
      ++stale;
      pkts[rest++] = m;
      continue;
    }
    flow::Megaflow& f = megaflows_.at(t.megaflow);
    if (f.generation.load(std::memory_order_acquire) != t.generation) {
      ++stale;
      pkts[rest++] = m;
      continue;
    }
    const flow::MegaflowActions& a = f.actions;
    const uint32_t len = rte_pktmbuf_pkt_len(m);
    if (a.kind == flow::MegaflowActions::Kind::kOutput) {
      if ((a.rewrite_flags & kRewriteL3) != 0) {
        if (!rewritable(m)) {
          ++stale;
          pkts[rest++] = m;
          continue;
        }
        l3RewriteToPod(*snap_, m, a.out_port);
      }
      enqueue(a.out_port, m, now);
    } else {
      counters_.drops[a.drop_reason < kDropReasonCount ? a.drop_reason : 0].inc();
      rte_pktmbuf_free(m);
      ++dropped;
    }
    // Per packet rather than per run: marked traffic is typically many
    // flows interleaved, and this is one line the megaflow check just read.
    f.recordHits(1, len, now);
    ++hits;
  }
  if (hits != 0) {
    counters_.mark_hits.add(hits);
    PortCounters& in = counters_.ports[in_port];
    in.rx_packets.add(hits);
    if (dropped != 0) in.rx_dropped.add(dropped);
  }
  if (stale != 0) counters_.mark_misses.add(stale);
  return rest;
}

}  // namespace sluice
