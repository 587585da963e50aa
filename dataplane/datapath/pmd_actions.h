// The PMD's action stage for one megaflow's actions (Pmd::takeActions,
// declared in pmd.h): the normal pipeline applies it to each run of packets
// (pmd.cc), the partial-offload branch to each marked packet
// (pmd_mark.cc), so that a marked packet gets exactly what the same
// packet would have got without its mark. Inline into both: it runs for
// every packet, and with the branch's constant count of one the compiler
// drops the run loops. PMD thread only.
#pragma once

#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/pmd.h"

namespace sluice {

[[gnu::always_inline]] inline void Pmd::dropPacket(rte_mbuf* m, DropReason reason) {
  counters_.drops[static_cast<size_t>(reason)].inc();
  rte_pktmbuf_free(m);
}

template <bool kInnerIpv6, bool kOuterIpv6>
[[gnu::always_inline]] inline uint16_t Pmd::encapRun(const flow::MegaflowActions& a, rte_mbuf* const* pkts,
                                                     uint16_t count, uint32_t key_hash, uint16_t in_port,
                                                     uint64_t now) {
  uint16_t dropped = 0;
  for (uint16_t i = 0; i < count; ++i) {
    DropReason reason{};  // set by encapOne when it drops
    const uint16_t next = vxlan::encapOne<kInnerIpv6, kOuterIpv6>(snap_->overlay, snap_->gateway_mac, pkts[i],
                                                      static_cast<uint16_t>(a.arg), key_hash, &reason);
    if (next == kNextDrop) {
      if (reason == DropReason::kOverlayMtuExceeded) [[unlikely]] {
        // Fragmented and sent, or dropped (perhaps answered: still a drop
        // of the packet received).
        dropped = static_cast<uint16_t>(dropped + overlayOversize(a, pkts[i], key_hash, in_port, now));
      } else {
        dropPacket(pkts[i], reason);
        ++dropped;
      }
    } else {
      enqueue(next, pkts[i], now);
    }
  }
  return dropped;
}

template <bool kMayEncap>
[[gnu::always_inline]] inline uint16_t Pmd::takeActions(const flow::MegaflowActions& a, rte_mbuf* const* pkts,
                                                        uint16_t count, uint32_t key_hash, uint16_t in_port,
                                                        uint64_t now) {
  if (a.kind == flow::MegaflowActions::Kind::kOutput) {
    // The out port's MTU: per packet, one compare of the frame length (on
    // the mbuf's first line, which the rewrite reads anyway) with the
    // action's max_frame (on the line this action came from); a packet
    // over it sends the whole run down the cold path.
    uint32_t over = 0;
    for (uint16_t i = 0; i < count; ++i) over |= rte_pktmbuf_pkt_len(pkts[i]) > a.max_frame;
    if (over != 0) [[unlikely]]
      return outputOversize(a, pkts, count, in_port, now);
    if (a.rewrite_flags & kRewriteL3) {
      for (uint16_t i = 0; i < count; ++i) l3RewriteToPod(*snap_, pkts[i], a.out_port);
    } else if (a.rewrite_flags & kRewriteL3v6) {  // IPv4 pays only the test above
      for (uint16_t i = 0; i < count; ++i) l3RewriteToPod6(*snap_, pkts[i], a.out_port);
    }
    if (count == 1) enqueue(a.out_port, pkts[0], now);
    else enqueueRun(a.out_port, pkts, count, now);
    return 0;
  }
  if constexpr (kMayEncap) {
    if (a.kind == flow::MegaflowActions::Kind::kEncap) {
      // The inner family once per run, as the output action tests it, and
      // the underlay's likewise.
      if (snap_->overlay.underlay_ipv6) [[unlikely]] {
        if (a.rewrite_flags & kRewriteL3) return encapRun<false, true>(a, pkts, count, key_hash, in_port, now);
        return encapRun<true, true>(a, pkts, count, key_hash, in_port, now);
      }
      if (a.rewrite_flags & kRewriteL3) return encapRun<false, false>(a, pkts, count, key_hash, in_port, now);
      return encapRun<true, false>(a, pkts, count, key_hash, in_port, now);
    }
  }
  if (a.kind == flow::MegaflowActions::Kind::kExternal) [[unlikely]]
    return externalRun(a, pkts, count, in_port, now);
  const auto reason = static_cast<DropReason>(a.drop_reason);
  if (a.rewrite_flags & kAnswerUnreachable) [[unlikely]] {
    dropUnreachable(pkts, count, in_port, now);  // answered likewise
    return count;
  }
  if (a.rewrite_flags & kAnswerEcho) [[unlikely]]
    return answerEcho(pkts, count, in_port, now);
  if (reason == DropReason::kTtlExceeded) [[unlikely]] {
    dropExpired(pkts, count, in_port, now);  // may answer them: still drops of the packets received
    return count;
  }
  for (uint16_t i = 0; i < count; ++i) dropPacket(pkts[i], reason);
  return count;
}

}  // namespace sluice
