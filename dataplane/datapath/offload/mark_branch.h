// The decision half of the PMD's partial-offload branch, as a stage over a
// burst (STYLE §3): which packets their NIC mark resolves, and to which
// megaflow. Pmd::takeMarked (pmd_mark.cc) then applies the megaflows'
// actions; the benchmark (bench/offload) times exactly this function.
// PMD thread only: no heap, locks or syscalls.
//
// A packet is resolved here only if all of this holds; otherwise it stays in
// the burst for the normal pipeline (and a mark that named nothing usable is
// counted as stale):
//   - it carries RTE_MBUF_F_RX_FDIR_ID;
//   - its mark names a megaflow of this PMD (mark_table.h);
//   - that megaflow is alive and of the generation the mark was made for
//     (a megaflow killed by revalidation is never used through a rule that
//     outlived it);
//   - its megaflow outputs (with or without the L3 rewrite) or drops (the
//     offload thread offloads no other action, e.g. no VXLAN encap);
//   - for the L3 rewrite: the frame holds an IPv4 header after an untagged
//     Ethernet header (what the rewrite reads and writes; the rule matched
//     EtherType 0x0800 without VLAN, this guards the rewrite against a NIC
//     that matched looser).
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/offload/mark_table.h"

namespace sluice::offload {

struct MarkSplit {
  uint16_t rest = 0;   // unresolved packets, compacted to the front of pkts
  uint16_t hits = 0;   // resolved packets in hit_pkts / hit_flows
  uint16_t stale = 0;  // marked, but the mark named nothing usable
};

inline bool markRewritable(const rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr)) return false;
  return (rte_pktmbuf_mtod(m, const uint8_t*)[RTE_ETHER_HDR_LEN] >> 4) == 4;
}

inline MarkSplit splitMarked(const MarkTable& marks, flow::MegaflowTable& megaflows, uint32_t pmd_index,
                             rte_mbuf** pkts, uint16_t n, rte_mbuf** hit_pkts, flow::Megaflow** hit_flows) {
  MarkSplit s;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) == 0) {
      pkts[s.rest++] = m;
      continue;
    }
    MarkTarget t;
    bool ok = marks.lookup(m->hash.fdir.hi, &t) && t.pmd == pmd_index && t.megaflow < megaflows.capacity() &&
              megaflows.isAlive(t.megaflow);
    flow::Megaflow* f = ok ? &megaflows.at(t.megaflow) : nullptr;
    ok = ok && f->generation.load(std::memory_order_acquire) == t.generation &&
         (f->actions.kind == flow::MegaflowActions::Kind::kDrop ||
          (f->actions.kind == flow::MegaflowActions::Kind::kOutput &&
           ((f->actions.rewrite_flags & kRewriteL3) == 0 || markRewritable(m))));
    if (!ok) {
      ++s.stale;
      pkts[s.rest++] = m;
      continue;
    }
    hit_pkts[s.hits] = m;
    hit_flows[s.hits] = f;
    ++s.hits;
  }
  return s;
}

}  // namespace sluice::offload
