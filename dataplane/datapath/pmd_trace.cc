// The PMD's side of packet trace and capture (pmd_tap.h): reached only from
// a burst whose tap is armed, so none of this runs while nobody watches.
// PMD lcore only.
#include <rte_cycles.h>

#include <algorithm>
#include <cstring>

#include "dataplane/datapath/pmd.h"

namespace sluice {
namespace {

// The count of packets still to record, after this burst took some. Only if
// control has not set a new session's count meanwhile (a burst that began
// under the previous session must not shorten the next one): a compare and
// swap, paid only while a tap is armed.
void storeLeft(std::atomic<uint32_t>& left, uint32_t given, uint32_t now_left) {
  if (now_left != given) left.compare_exchange_strong(given, now_left, std::memory_order_relaxed);
}

}  // namespace

void Pmd::decideRunsTraced(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs, uint64_t now) {
  // Reading the tap word again with acquire pairs with control's release when
  // it armed the session: its parameters are the ones read below. (Taken only
  // while a trace is armed; a load rather than a fence, which ThreadSanitizer
  // cannot follow.)
  (void)tap_.armed.load(std::memory_order_acquire);
  const uint32_t given = tap_.trace_left.load(std::memory_order_relaxed);
  uint32_t left = given;
  if (in_port != tap_.trace_port.load(std::memory_order_relaxed) || left == 0) {
    decideRuns(in_port, pkts, n_runs, now);
    return;
  }
  // Screening overwrites a screened key's parse result; the trace shows it.
  uint8_t parse[kBurstSize];
  for (uint16_t r = 0; r < n_runs; ++r) parse[r] = keys_[r].parse_result;
  screen(in_port, pkts, n_runs);
  const TapFilter filter = tap_.filter();
  const uint64_t session = tap_.trace_session.load(std::memory_order_relaxed);
  for (uint16_t r = 0; r < n_runs; ++r) {
    TraceTier tier = TraceTier::kScreened;
    TraceUpcall upcall = TraceUpcall::kNone;
    if (keys_[r].parse_result == parse[r]) {
      // Looked up alone, so that the tier counters' growth names its tier.
      const flow::TierCounters before = lookup_.counters();
      const uint64_t sent = counters_.upcalls.read();
      const uint64_t lost = counters_.lost_upcalls.read();
      const uint64_t coalesced = counters_.upcalls_coalesced.read();
      lookupRuns(in_port, pkts, r, static_cast<uint16_t>(r + 1), now);
      const flow::TierCounters& after = lookup_.counters();
      if (after.emc_hits != before.emc_hits) {
        tier = TraceTier::kEmc;
      } else if (after.smc_hits != before.smc_hits) {
        tier = TraceTier::kSmc;
      } else if (after.megaflow_hits != before.megaflow_hits) {
        tier = TraceTier::kMegaflow;
      } else {
        tier = TraceTier::kMiss;
        // A sent upcall also counts its run's later packets as coalesced.
        if (counters_.upcalls.read() != sent) upcall = TraceUpcall::kSent;
        else if (counters_.lost_upcalls.read() != lost) upcall = TraceUpcall::kLost;
        else if (counters_.upcalls_coalesced.read() != coalesced) upcall = TraceUpcall::kCoalesced;
      }
    }
    if (left == 0 || !filter.matches(keys_[r])) continue;
    const RunDecision& d = decisions_[r];
    const flow::PacketRun run = runs_[r];
    for (uint16_t i = 0; i < run.count && left != 0; ++i, --left) {
      TraceRecord* rec = tap_.traces.claim();
      if (rec == nullptr) {
        tap_.trace_dropped.inc();
        continue;
      }
      rec->key = keys_[r];
      rec->key.parse_result = parse[r];
      rec->session = session;
      rec->tsc = now;
      rec->pkt_len = rte_pktmbuf_pkt_len(pkts[run.first + i]);
      rec->in_port = in_port;
      rec->parse_result = parse[r];
      rec->tier = i == 0 ? tier : TraceTier::kRunHit;
      rec->upcall = i == 0 ? upcall : TraceUpcall::kNone;
      rec->megaflow = flow::kNoMegaflow;
      if (tier == TraceTier::kScreened) {
        rec->next = d.next;
        rec->reason = static_cast<uint8_t>(d.reason);
        rec->actions = flow::MegaflowActions{};
        rec->mf_key = flow::FlowKey{};
        rec->mf_mask = flow::FlowMask{};
      } else {
        rec->actions = *d.action;
        if (d.flow != flow::kNoMegaflow) {
          rec->megaflow = d.flow;
          rec->mf_key = megaflows_.at(d.flow).key;
          rec->mf_mask = megaflows_.at(d.flow).mask;
        } else {  // a miss: the translation lookupRuns made for this run
          rec->mf_mask = missed_[r].mask;
          rec->mf_key = flow::applyMask(keys_[r], missed_[r].mask);
        }
      }
      tap_.traces.publish();
    }
  }
  storeLeft(tap_.trace_left, given, left);
}

void Pmd::capturePackets(uint16_t port_no, rte_mbuf* const* pkts, uint16_t n, bool tx) {
  (void)tap_.armed.load(std::memory_order_acquire);  // as in decideRunsTraced
  if (port_no != tap_.capture_port.load(std::memory_order_relaxed)) return;
  const uint32_t given = tap_.capture_left.load(std::memory_order_relaxed);
  uint32_t left = given;
  if (left == 0) return;
  const uint32_t snaplen = std::min(tap_.snaplen.load(std::memory_order_relaxed), kCaptureSnapMax);
  const uint64_t session = tap_.capture_session.load(std::memory_order_relaxed);
  const uint64_t tsc = rte_rdtsc();
  for (uint16_t i = 0; i < n && left != 0; ++i, --left) {
    CaptureSlot* s = tap_.captures.claim();
    if (s == nullptr) {
      tap_.capture_dropped.inc();
      continue;
    }
    const rte_mbuf* m = pkts[i];
    const uint32_t len = rte_pktmbuf_pkt_len(m);
    const uint32_t cap = std::min(len, snaplen);
    // Chained mbufs are gathered into the slot; a contiguous one is copied.
    const void* bytes = rte_pktmbuf_read(m, 0, cap, s->data);
    if (bytes != nullptr && bytes != s->data) std::memcpy(s->data, bytes, cap);
    s->session = session;
    s->tsc = tsc;
    s->orig_len = len;
    s->cap_len = bytes != nullptr ? cap : 0;
    s->port = port_no;
    s->tx = tx ? 1 : 0;
    tap_.captures.publish();
  }
  storeLeft(tap_.capture_left, given, left);
}

}  // namespace sluice
