// The decision half of the PMD's partial-offload branch, as a stage over a
// burst: which packets their NIC mark resolves, and to which
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
//
// On an overlay uplink (splitMarkedDecap) every megaflow is a decap megaflow
// (the uplink stage lets nothing but decapsulated VXLAN reach a lookup, so
// the offload thread only ever offloads those from it), and a rule matched
// the outer headers too: outer IPv4 without options to our VTEP, UDP 4789,
// VXLAN flags and VNI, inner headers. The branch trusts the rule for the
// fields it names (as the plain branch trusts addresses and TTL) and guards
// what the pop and the rewrite rely on, so that a looser NIC or a hostile
// frame cannot make it read or cut wrongly (decapGuard); a frame failing the
// guard falls back like a stale mark, outer headers untouched, and the
// normal pipeline classifies it (and usually drops it by reason).
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/mark_table.h"
#include "dataplane/datapath/overlay/vxlan_decap.h"

namespace sluice::offload {

struct MarkSplit {
  uint16_t rest = 0;   // unresolved packets, compacted to the front of pkts
  uint16_t hits = 0;   // resolved packets in hit_pkts / hit_flows
  uint16_t stale = 0;  // marked, but the mark named nothing usable
};

inline bool markRewritable(const rte_mbuf* m, bool ipv6 = false) {
  const uint32_t header = ipv6 ? sizeof(rte_ipv6_hdr) : sizeof(rte_ipv4_hdr);
  if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + header) return false;
  return (rte_pktmbuf_mtod(m, const uint8_t*)[RTE_ETHER_HDR_LEN] >> 4) == (ipv6 ? 6 : 4);
}

// The live megaflow of this PMD that m's mark names, of the generation the
// mark was made for (a megaflow killed by revalidation is never used through
// a rule that outlived it); nullptr otherwise.
inline flow::Megaflow* markedMegaflow(const MarkTable& marks, flow::MegaflowTable& megaflows, uint32_t pmd_index,
                                      const rte_mbuf* m) {
  MarkTarget t;
  if (!marks.lookup(m->hash.fdir.hi, &t) || t.pmd != pmd_index || t.megaflow >= megaflows.capacity() ||
      !megaflows.isAlive(t.megaflow))
    return nullptr;
  flow::Megaflow* f = &megaflows.at(t.megaflow);
  return f->generation.load(std::memory_order_acquire) == t.generation ? f : nullptr;
}

// The loop both branches share: unmarked packets, and marked ones whose mark
// names no usable megaflow (counted as stale), stay in pkts, in order, for
// the normal pipeline. take(m, f, hit) decides the rest (and prepares m when
// it takes it as hit number `hit`).
template <typename Take>
inline MarkSplit splitMarkedBy(const MarkTable& marks, flow::MegaflowTable& megaflows, uint32_t pmd_index,
                               rte_mbuf** pkts, uint16_t n, rte_mbuf** hit_pkts, flow::Megaflow** hit_flows,
                               Take take) {
  MarkSplit s;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) == 0) {
      pkts[s.rest++] = m;
      continue;
    }
    flow::Megaflow* f = markedMegaflow(marks, megaflows, pmd_index, m);
    if (f == nullptr || !take(m, *f, s.hits)) {
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

inline MarkSplit splitMarked(const MarkTable& marks, flow::MegaflowTable& megaflows, uint32_t pmd_index,
                             rte_mbuf** pkts, uint16_t n, rte_mbuf** hit_pkts, flow::Megaflow** hit_flows) {
  return splitMarkedBy(marks, megaflows, pmd_index, pkts, n, hit_pkts, hit_flows,
                       [](const rte_mbuf* m, const flow::Megaflow& f, uint16_t) {
                         return f.actions.kind == flow::MegaflowActions::Kind::kDrop ||
                                (f.actions.kind == flow::MegaflowActions::Kind::kOutput &&
                                 ((f.actions.rewrite_flags & (kRewriteL3 | kRewriteL3v6)) == 0 ||
                                  markRewritable(m, (f.actions.rewrite_flags & kRewriteL3v6) != 0)));
                       });
}

// What a decap hit needs after the pop: the tunnel (for its rx counters)
// and the inner frame's length.
struct DecapHit {
  uint32_t outer_src_be = 0;
  uint16_t inner_len = 0;
};

// The outer header the PMD pops: Ethernet, IPv4 without options, UDP, VXLAN.
inline constexpr uint32_t kDecapPop = vxlan::kOuterLen;  // 50
// Smallest frame the branch takes: the outer header, then an inner Ethernet
// and IPv4 header (what the rewrite reads and writes).
inline constexpr uint32_t kDecapMinFrame = kDecapPop + RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr);

// The checks of classifyUplinkFrame (vxlan_decap.h) that the rule does not
// guarantee, for a frame whose outer header is exactly 50 bytes: true and
// *hit when popping kDecapPop bytes and trimming to hit->inner_len gives the
// inner frame the uplink stage would give, holding an IPv4 header.
inline bool decapGuard(const rte_mbuf* m, DecapHit* hit) {
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len < kDecapMinFrame) return false;
  const uint8_t* ip = rte_pktmbuf_mtod(m, const uint8_t*) + vxlan::kEthLen;
  if (ip[0] != 0x45) return false;  // version 4, IHL 5: the pop is 50 bytes
  // Fragments are never decapsulated (the rule may not exclude them).
  if (((ip[6] << 8 | ip[7]) & 0x3fff) != 0) return false;
  const uint32_t total = static_cast<uint32_t>(ip[2] << 8 | ip[3]);
  if (total > len - vxlan::kEthLen) return false;
  const uint8_t* udp = ip + vxlan::kIpv4Len;
  const uint32_t udp_len = static_cast<uint32_t>(udp[4] << 8 | udp[5]);
  // UDP length within the IPv4 payload; the inner frame holds Ethernet + IPv4.
  if (udp_len + vxlan::kIpv4Len > total) return false;
  if (udp_len < vxlan::kUdpLen + vxlan::kVxlanLen + RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr)) return false;
  // The rewrite's own precondition, on the inner frame.
  if ((ip[vxlan::kIpv4Len + vxlan::kUdpLen + vxlan::kVxlanLen + RTE_ETHER_HDR_LEN] >> 4) != 4) return false;
  std::memcpy(&hit->outer_src_be, ip + 12, 4);
  hit->inner_len = static_cast<uint16_t>(udp_len - vxlan::kUdpLen - vxlan::kVxlanLen);
  return true;
}

// splitMarked for the overlay uplink: resolved packets are decapsulated in
// place (outer 50 bytes popped, trimmed to the inner length) and their
// DecapHit written beside them; unresolved ones are left as received.
inline MarkSplit splitMarkedDecap(const MarkTable& marks, flow::MegaflowTable& megaflows, uint32_t pmd_index,
                                  rte_mbuf** pkts, uint16_t n, rte_mbuf** hit_pkts, flow::Megaflow** hit_flows,
                                  DecapHit* hits) {
  return splitMarkedBy(marks, megaflows, pmd_index, pkts, n, hit_pkts, hit_flows,
                       [hits](rte_mbuf* m, const flow::Megaflow& f, uint16_t hit) {
                         if ((f.actions.kind != flow::MegaflowActions::Kind::kDrop &&
                              f.actions.kind != flow::MegaflowActions::Kind::kOutput) ||
                             !decapGuard(m, &hits[hit]))
                           return false;
                         rte_pktmbuf_adj(m, kDecapPop);
                         // Outer Ethernet padding (and IPv4 payload past UDP) is not inner frame.
                         if (rte_pktmbuf_pkt_len(m) > hits[hit].inner_len)
                           rte_pktmbuf_trim(m, static_cast<uint16_t>(rte_pktmbuf_pkt_len(m) - hits[hit].inner_len));
                         return true;
                       });
}

}  // namespace sluice::offload
