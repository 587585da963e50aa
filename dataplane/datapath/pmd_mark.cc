// The PMD's partial-offload branch (Pmd::takeMarked, declared in pmd.h):
// packets that the NIC (or the software flow engine standing in for it)
// tagged with a mark go straight from the mark to their megaflow's actions,
// without key extraction or any cache lookup (which packets qualify:
// mark_branch.h). On the overlay uplink the hits are decapsulated first
// (outer headers popped, the tunnel's rx counters counted as the uplink
// stage does), then take the same actions. PMD thread only: no heap, locks or syscalls.
#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/mark_branch.h"
#include "dataplane/datapath/pmd.h"
#include "dataplane/datapath/pmd_actions.h"

namespace sluice {

uint16_t Pmd::takeMarked(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now) {
  if (in_port != marks_->port()) return n;
  rte_mbuf* hit_pkts[kBurstSize];
  flow::Megaflow* hit_flows[kBurstSize];
  // The overlay uplink: every offloaded megaflow is a decap one (see
  // mark_branch.h); the hits come decapsulated.
  const vxlan::OverlaySnapshot& ov = snap_->overlay;
  const bool decap = ov.enabled && in_port == ov.uplink_port;
  offload::DecapHit decap_hits[kBurstSize];
  const offload::MarkSplit s =
      decap ? offload::splitMarkedDecap(*marks_, megaflows_, pmd_index_, pkts, n, hit_pkts, hit_flows, decap_hits)
            : offload::splitMarked(*marks_, megaflows_, pmd_index_, pkts, n, hit_pkts, hit_flows);
  if (s.stale != 0) counters_.mark_misses.add(s.stale);
  if (s.hits == 0) return s.rest;
  if (decap) {
    // The tunnel's rx counters, exactly as the uplink stage counts a
    // decapsulated packet (before its megaflow's actions).
    const vxlan::OverlayTables& tables = *ov.tables;
    for (uint16_t i = 0; i < s.hits; ++i) {
      if (const uint16_t t = tables.tunnelForVtep(decap_hits[i].outer_src_be); t != vxlan::kNoTunnel) {
        vxlan::TunnelCounters& c = ov.counters->tunnels[t];
        c.rx_packets.inc();
        c.rx_bytes.add(decap_hits[i].inner_len);
      }
    }
  }
  uint32_t dropped = 0;
  for (uint16_t i = 0; i < s.hits; ++i) {
    rte_mbuf* m = hit_pkts[i];
    flow::Megaflow& f = *hit_flows[i];
    // Per packet rather than per run: marked traffic is typically many flows
    // interleaved, and this is the line the megaflow check just read.
    f.recordHits(1, rte_pktmbuf_pkt_len(m), now);
    // Only output and drop megaflows are offloaded (splitMarked checked):
    // no encap, so no key hash either.
    dropped += takeActions<false>(f.actions, &hit_pkts[i], 1, 0, in_port, now);
  }
  counters_.mark_hits.add(s.hits);
  PortCounters& in = counters_.ports[in_port];
  in.rx_packets.add(s.hits);
  if (dropped != 0) in.rx_dropped.add(dropped);
  return s.rest;
}

}  // namespace sluice
