#include "dataplane/datapath/pmd.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "common/thread_sanitizer.h"
#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/nd/neighbor_discovery.h"
#include "dataplane/datapath/parse_drop.h"
#include "dataplane/datapath/pmd_actions.h"

namespace sluice {
namespace {

// Marks a key the screen stage decided, so that FlowLookup skips it (it looks
// up only kOk keys). Not a ParseResult: never reported.
constexpr uint8_t kScreened = 0xff;
constexpr uint8_t kIpProtoIcmpv6 = 58;

}  // namespace

int Pmd::launch(void* pmd) {
  tsanAcquire(pmd);  // made by the main thread, handed over by DPDK's launch
  static_cast<Pmd*>(pmd)->run();
  return 0;
}

void Pmd::run() {
  // seq_cst here and on control's side of the hand-over (publish, then read
  // `running`): otherwise control could see us not running while we read a
  // stale snapshot pointer (the store→load pattern needs a full fence).
  mailbox_.running.store(true, std::memory_order_seq_cst);
  // The kernel may end a sleep up to the thread's timer slack late (50 µs by
  // default), which would turn the short sleeps of restWhileLight into long
  // ones; 1 ns keeps them as asked.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  rte_mbuf* pkts[kBurstSize];
  // One TSC read per iteration: it ends one iteration and starts the next,
  // and it is the time stamp of every packet received in the next (batching,
  // megaflow use, upcall pacing need no finer clock). A read costs about 25
  // cycles on a virtualised TSC (the VMs it was measured on), a packet's
  // whole lookup ~40.
  uint64_t now = rte_rdtsc();
  while (!mailbox_.stop.load(std::memory_order_relaxed)) {
    // Quiescent point: no packet, snapshot or classifier pointer is held across it.
    if (mailbox_.published.load(std::memory_order_seq_cst) != snap_) pickUpSnapshot();
    if (const uint64_t g = mailbox_.grace_request.load(std::memory_order_seq_cst); g != grace_seen_) {
      grace_seen_ = g;
      mailbox_.grace_passed.store(g, std::memory_order_release);
    }
    if (const flow::Classifier* c = mailbox_.classifier.load(std::memory_order_seq_cst); c != classifier_) {
      classifier_ = c;
      lookup_.setClassifier(c);
      mailbox_.classifier_acked.store(c, std::memory_order_release);
    }
    if (snap_ == nullptr) {
      now = restWhileLight(rte_rdtsc());
      continue;
    }

    const uint64_t start = now;
    uint32_t received = 0;
    // Stage cycles: a TSC read where a stage ends, only in bursts that
    // brought packets (an idle iteration reads none more than before).
    uint64_t stage_start = start;
    // Busy queues every iteration, idle ones in turn (rx_schedule.h);
    // light: every queue polled returned under half a burst.
    const bool light = rx_schedule_.pollOnce(start, [&](const RxQueueRef& rxq) -> uint16_t {
      const uint16_t n = rxq.vhost != nullptr ? vhostReceive(*rxq.vhost, rxq.queue, packet_pool_, pkts, kBurstSize)
                                              : rte_eth_rx_burst(rxq.dpdk_port, rxq.queue, pkts, kBurstSize);
      if (n == 0) return 0;
      received += n;
      counters_.rx_queue_packets[rxq.port_no][rxq.queue].add(n);
      uint64_t t = rte_rdtsc();
      counters_.rx_cycles.add(t - stage_start);
      t = processBurst(rxq.port_no, pkts, n, start, t);
      if (snap_->tx_flush_cycles == 0) {
        flushAll();
        const uint64_t flushed = rte_rdtsc();
        counters_.tx_cycles.add(flushed - t);
        t = flushed;
      }
      stage_start = t;
      return n;
    });
    if (snap_->overlay.control_tx != nullptr) sendControlFrames(start);
    now = rte_rdtsc();
    if (received != 0) counters_.rx_cycles.add(now - stage_start);  // the polls after the last burst
    // Batches held by tx-flush-interval; the flush's cycles count in the next iteration.
    if (pending_count_ != 0) flushExpired(now);
    if (received != 0) {
      counters_.busy_cycles.add(now - start);
      counters_.packets.add(received);
    } else {
      counters_.idle_cycles.add(now - start);
    }
    if (light) {
      now = restWhileLight(now);
    } else {
      sleep_us_ = 0;
    }
  }
  flushAll();
  mailbox_.running.store(false, std::memory_order_release);
}

uint64_t Pmd::restWhileLight(uint64_t now) {
  if (max_sleep_us_ == 0) return now;
  // A little longer each light iteration in a row: a brief lull costs a
  // few µs of latency, a quiet spell gives the core back almost entirely.
  sleep_us_ = std::min(sleep_us_ + 1, max_sleep_us_);
  // Nothing waits out a sleep in an output batch.
  flushAll();
  const timespec length{0, static_cast<long>(sleep_us_) * 1000};
  ::nanosleep(&length, nullptr);
  const uint64_t woke = rte_rdtsc();
  counters_.sleep_cycles.add(woke - now);
  counters_.sleeps.inc();
  return woke;
}

void Pmd::pickUpSnapshot() {
  // Packets batched under the old snapshot go out under it: its ports are
  // still open until control sees our acknowledgement below.
  flushAll();
  const PmdSnapshot* previous = snap_;  // alive until the acknowledgement below
  snap_ = mailbox_.published.load(std::memory_order_seq_cst);
  rx_schedule_.assign(previous != nullptr ? std::span<const RxQueueRef>(previous->rx_queues)
                                          : std::span<const RxQueueRef>(),
                      snap_ != nullptr ? std::span<const RxQueueRef>(snap_->rx_queues) : std::span<const RxQueueRef>());
  if (snap_ != nullptr) {
    gate_.setPortCount(static_cast<uint32_t>(snap_->rx_queues.size()));
    icmp_limiter_.setPortCount(static_cast<uint32_t>(snap_->rx_queues.size()));
    if (snap_->settings.generation != settings_generation_) applySettings(snap_->settings);
  }
  counters_.reloads.inc();
  mailbox_.acked_version.store(snap_ != nullptr ? snap_->version : 0, std::memory_order_release);
}

void Pmd::applySettings(const PmdSettings& settings) {
  settings_generation_ = settings.generation;
  lookup_.setCacheTiers(settings.emc_insert_inv_prob, settings.smc_enable);
  gate_.setRate(settings.upcall_rate, settings.upcall_burst);
  max_sleep_us_ = settings.max_sleep_us;
  icmp_limiter_.setRate(settings.icmp_error_rate);
  echo_limiter_.setRate(settings.icmp_error_rate);
}

uint64_t Pmd::processBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now, uint64_t t) {
  counters_.rx_bursts.inc();
  // Trace and capture: one relaxed load per burst, a branch not taken unless armed.
  const uint32_t tap = tap_.armed.load(std::memory_order_relaxed);
  if (tap & kTapCaptureRx) [[unlikely]] capturePackets(in_port, pkts, n, false);
  auto stage_end = [&t](Counter& c) {
    const uint64_t end = rte_rdtsc();
    c.add(end - t);
    t = end;
  };
  if (marks_ != nullptr && (n = takeMarked(in_port, pkts, n, now)) == 0) {  // partial offload
    stage_end(counters_.parse_cycles);
    return t;
  }
  PortCounters& in = counters_.ports[in_port];
  in.rx_packets.add(n);
  // Uplink: VXLAN is decapsulated first, so the inner packet is classified
  // once, with the tunnel fields in its key (no recirculation).
  const bool from_uplink = snap_->overlay.enabled && in_port == snap_->overlay.uplink_port;
  uint64_t breaks = 0;
  if (from_uplink) {
    if ((n = uplinkRx(in_port, pkts, n, now)) == 0) {
      stage_end(counters_.parse_cycles);
      return t;
    }
    breaks = vxlan::tunnelChanges(tun_meta_, n);
  }
  // From here on the stages work on runs (consecutive packets with one key),
  // deciding once per run; only the actions touch every packet.
  const uint16_t n_runs = extractKeys(in_port, pkts, n, breaks);
  if (from_uplink) vxlan::applyTunnelMeta(tun_meta_, runs_, n_runs, keys_);
  stage_end(counters_.parse_cycles);
  if (tap & kTapTrace) [[unlikely]] {
    decideRunsTraced(in_port, pkts, n_runs, now);
  } else {
    decideRuns(in_port, pkts, n_runs, now);
  }
  stage_end(counters_.lookup_cycles);
  const uint16_t dropped = act(in_port, pkts, n_runs, now);
  if (dropped != 0) in.rx_dropped.add(dropped);
  stage_end(counters_.action_cycles);
  return t;
}

uint16_t Pmd::extractKeys(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n, uint64_t breaks) {
  flow::PacketRef refs[kBurstSize];
  for (uint16_t i = 0; i < n; ++i) {
    const rte_mbuf* m = pkts[i];
    refs[i] = {rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), m->hash.rss,
               (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0};
    // A chained mbuf (a frame longer than one buffer: vhost chains them)
    // is parsed in its first segment, its stated lengths checked against
    // the whole frame (nb_segs shares the first line with data_off).
    if (m->nb_segs != 1) [[unlikely]] refs[i].frame_len = rte_pktmbuf_pkt_len(m);
  }
  return static_cast<uint16_t>(flow::extractFlowKeyRuns(refs, n, in_port, breaks, keys_, runs_));
}

void Pmd::decideRuns(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs, uint64_t now) {
  if (screen(in_port, pkts, n_runs) != 0) lookupRuns(in_port, pkts, 0, n_runs, now);
}

uint16_t Pmd::screen(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs) {
  uint16_t to_lookup = 0;
  uint16_t screened = 0;  // packets decided here, before any lookup
  for (uint16_t r = 0; r < n_runs; ++r) {
    flow::FlowKey& k = keys_[r];
    RunDecision& d = decisions_[r];
    d.action = nullptr;
    if (k.result() == flow::ParseResult::kOk && k.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
        (k.flags & flow::kFlagVlan) == 0) {
      ++to_lookup;
      continue;
    }
    // Only untagged IPv4 frames form runs longer than one: this is one packet.
    if (k.result() != flow::ParseResult::kOk) {
      d.next = kNextDrop;
      d.reason = parseDropReason(k.result());
      // A chained frame's headers are read in its first segment only: one
      // that ends there is split, not short (its length checks passed on
      // the whole frame).
      if (d.reason == DropReason::kTruncated && pkts[runs_[r].first]->nb_segs != 1)
        d.reason = DropReason::kHeadersSplit;
    } else if (k.eth_type == RTE_BE16(RTE_ETHER_TYPE_ARP) && (k.flags & flow::kFlagVlan) == 0) {
      d.next = l3AnswerArp(*snap_, in_port, pkts[runs_[r].first], &d.reason);
    } else if (k.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV6) && (k.flags & flow::kFlagVlan) == 0) {
      // IPv6 is looked up through the same tiers as IPv4, except neighbor
      // discovery, answered per packet like ARP (never from the uplink: a
      // peer node's pods are not on our pods' links; the uplink stage drops
      // the plain case, this the one behind extension headers).
      if (k.ip_proto != kIpProtoIcmpv6 || !isNeighborDiscoveryType(k.icmp_type)) {
        ++to_lookup;
        continue;
      }
      if (k.tun_vni == 0) {
        d.next = l3AnswerNd(*snap_, in_port, pkts[runs_[r].first], &d.reason);
      } else {
        d.next = kNextDrop;
        d.reason = DropReason::kVxlanInnerNd;
      }
    } else {
      // The L3 rewrite assumes an untagged frame.
      d.next = kNextDrop;
      d.reason = DropReason::kUnsupportedEthertype;
    }
    k.parse_result = kScreened;
    screened = static_cast<uint16_t>(screened + runs_[r].count);
  }
  if (screened != 0) counters_.not_looked_up.add(screened);
  return to_lookup;
}

void Pmd::lookupRuns(uint16_t in_port, rte_mbuf* const* pkts, uint16_t first, uint16_t end, uint64_t now) {
  // Indexed by run number (first..end), as keys_ and decisions_ are.
  flow::MegaflowIndex flows[kBurstSize];
  uint16_t misses[kBurstSize];
  const uint32_t n_miss = lookup_.lookupBurst(keys_ + first, end - first, flows + first, misses);

  // Hits: account them on their megaflows (consecutive runs of one megaflow
  // cost one update) and take the megaflow's actions. A run's packets after
  // its first were resolved with it: run hits.
  flow::MegaflowIndex acc = flow::kNoMegaflow;
  uint32_t acc_packets = 0;
  uint64_t acc_bytes = 0;
  uint32_t followers = 0;
  for (uint16_t r = first; r < end; ++r) {
    if (flows[r] == flow::kNoMegaflow) continue;
    if (flows[r] != acc) {
      if (acc_packets != 0) megaflows_.at(acc).recordHits(acc_packets, acc_bytes, now);
      acc = flows[r];
      acc_packets = 0;
      acc_bytes = 0;
    }
    const flow::PacketRun run = runs_[r];
    acc_packets += run.count;
    followers += run.count - 1U;
    for (uint16_t i = run.first; i < run.first + run.count; ++i) acc_bytes += rte_pktmbuf_pkt_len(pkts[i]);
    decisions_[r].action = &megaflows_.at(flows[r]).actions;
    decisions_[r].flow = flows[r];
  }
  if (acc_packets != 0) megaflows_.at(acc).recordHits(acc_packets, acc_bytes, now);
  if (followers != 0) counters_.run_hits.add(followers);

  // Misses: decide from this snapshot's tables now, and ask control for the
  // megaflow so that the flow's next packets hit. One upcall per run: its
  // later packets count as coalesced with it (or lost with it). A lost
  // upcall loses no packet: the decision is made already; only caching waits.
  if (n_miss != 0) {
    const RouteTables tables{.fib = snap_->fib.get(),
                             .gateway_ip_be = snap_->gateway_ip_be,
                             .overlay = snap_->overlay.tables.get(),
                             .uplink_port = snap_->overlay.uplink_port,
                             .fib6 = snap_->fib6.get(),
                             .v6 = &snap_->v6,
                             .port_mtus = snap_->port_mtus.data(),
                             .pod_net_be = snap_->pod_net_be,
                             .pod_mask_be = snap_->pod_mask_be,
                             .sources = snap_->sources.get(),
                             .prefixes = snap_->prefixes.get(),
                             .external = snap_->overlay.external.enabled,
                             .external_max_frame = snap_->overlay.external.max_frame,
                             .host = &snap_->host};
    uint64_t sent = 0, coalesced = 0, lost = 0, missed_followers = 0;
    for (uint32_t j = 0; j < n_miss; ++j) {
      const uint16_t r = static_cast<uint16_t>(first + misses[j]);
      const uint32_t later = runs_[r].count - 1U;
      missed_followers += later;
      FlowTranslation& t = missed_[first + j];
      translateFlow(tables, keys_[r], t);
      const uint32_t flow_hash = flow::hashKey(flow::applyMask(keys_[r], t.mask));
      decisions_[r].action = &t.actions;
      decisions_[r].flow = flow::kNoMegaflow;
      switch (gate_.admit(flow_hash, in_port, now)) {
        case UpcallGate::Verdict::kSend:
          if (upcalls_.push(keys_[r])) {
            ++sent;
            coalesced += later;
          } else {
            gate_.unsend(flow_hash);
            lost += 1 + later;
          }
          break;
        case UpcallGate::Verdict::kCoalesced:
          coalesced += 1 + later;
          break;
        case UpcallGate::Verdict::kLost:
          lost += 1 + later;
          break;
      }
    }
    if (missed_followers != 0) counters_.misses.add(missed_followers);
    if (sent != 0) counters_.upcalls.add(sent);
    if (coalesced != 0) counters_.upcalls_coalesced.add(coalesced);
    if (lost != 0) counters_.lost_upcalls.add(lost);
  }

  // Publish the tier counters' growth (one run's first packet, one tier).
  const flow::TierCounters& t = lookup_.counters();
  flow::TierCounters& p = published_tiers_;
  if (t.emc_hits != p.emc_hits) counters_.emc_hits.add(t.emc_hits - p.emc_hits);
  if (t.smc_hits != p.smc_hits) counters_.smc_hits.add(t.smc_hits - p.smc_hits);
  if (t.megaflow_hits != p.megaflow_hits) counters_.megaflow_hits.add(t.megaflow_hits - p.megaflow_hits);
  if (t.misses != p.misses) counters_.misses.add(t.misses - p.misses);
  if (t.subtable_lookups != p.subtable_lookups)
    counters_.subtable_lookups.add(t.subtable_lookups - p.subtable_lookups);
  p = t;
}

uint16_t Pmd::act(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs, uint64_t now) {
  uint16_t dropped = 0;
  for (uint16_t r = 0; r < n_runs; ++r) {
    const flow::PacketRun run = runs_[r];
    rte_mbuf* const* first = pkts + run.first;
    const RunDecision& d = decisions_[r];
    if (d.action == nullptr) {  // decided before lookup
      for (uint16_t i = 0; i < run.count; ++i) {
        if (d.next == kNextDrop) {
          dropPacket(first[i], d.reason);
          ++dropped;
        } else {
          enqueue(d.next, first[i], now);
        }
      }
      continue;
    }
    dropped = static_cast<uint16_t>(dropped +
                                    takeActions<true>(*d.action, first, run.count, keys_[r].hash, in_port, now));
  }
  return dropped;
}

void Pmd::startBatch(TxBatch& b, uint16_t port_no, uint64_t now) {
  b.first_tsc = now;
  if (!b.pending) {
    b.pending = true;
    pending_ports_[pending_count_++] = port_no;
  }
}

void Pmd::enqueue(uint16_t port_no, rte_mbuf* m, uint64_t now) {
  TxBatch& b = batches_[port_no];
  if (b.count == 0) startBatch(b, port_no, now);
  b.pkts[b.count++] = m;
  if (b.count == kBurstSize) flush(port_no);
}

void Pmd::enqueueRun(uint16_t port_no, rte_mbuf* const* pkts, uint16_t n, uint64_t now) {
  TxBatch& b = batches_[port_no];
  while (n != 0) {
    if (b.count == 0) startBatch(b, port_no, now);
    const uint16_t take = std::min<uint16_t>(n, static_cast<uint16_t>(kBurstSize - b.count));
    std::memcpy(&b.pkts[b.count], pkts, take * sizeof(rte_mbuf*));
    b.count = static_cast<uint16_t>(b.count + take);
    pkts += take;
    n = static_cast<uint16_t>(n - take);
    if (b.count == kBurstSize) flush(port_no);
  }
}

void Pmd::flush(uint16_t port_no) {
  TxBatch& b = batches_[port_no];
  uint16_t count = b.count;
  b.count = 0;
  const TxPortSlot& slot = snap_->tx_ports[port_no];
  PortCounters& out = counters_.ports[port_no];
  if (!slot.valid) {
    // The route pointed at a port that this snapshot no longer has (it can
    // only happen if a forwarding table and port set disagree).
    counters_.drops[static_cast<size_t>(DropReason::kPortGone)].add(count);
    out.tx_dropped.add(count);
    rte_pktmbuf_free_bulk(b.pkts, count);
    return;
  }
  if (tap_.armed.load(std::memory_order_relaxed) & kTapCaptureTx) [[unlikely]] {
    capturePackets(port_no, b.pkts, count, true);
  }
  uint16_t sent;
  if (slot.lock != nullptr) {
    rte_spinlock_lock(slot.lock);
    sent = slot.vhost != nullptr ? vhostSend(*slot.vhost, slot.queue, b.pkts, count)
                                 : rte_eth_tx_burst(slot.dpdk_port, slot.queue, b.pkts, count);
    rte_spinlock_unlock(slot.lock);
    counters_.tx_locked_batches.inc();
  } else {
    sent = slot.vhost != nullptr ? vhostSend(*slot.vhost, slot.queue, b.pkts, count)
                                 : rte_eth_tx_burst(slot.dpdk_port, slot.queue, b.pkts, count);
  }
  counters_.tx_batches.inc();
  counters_.tx_batched.add(count);
  counters_.tx_packets.add(sent);
  out.tx_packets.add(sent);
  if (sent != count) {
    uint16_t refused = static_cast<uint16_t>(count - sent);
    counters_.drops[static_cast<size_t>(DropReason::kTxQueueFull)].add(refused);
    out.tx_dropped.add(refused);
    rte_pktmbuf_free_bulk(b.pkts + sent, refused);
  }
}

void Pmd::flushAll() {
  for (uint16_t i = 0; i < pending_count_; ++i) {
    const uint16_t port_no = pending_ports_[i];
    TxBatch& b = batches_[port_no];
    b.pending = false;
    if (b.count != 0) flush(port_no);
  }
  pending_count_ = 0;
}

void Pmd::flushExpired(uint64_t now) {
  // Flushes the batches that waited long enough and keeps the others
  // listed, in order (compacted in place).
  uint16_t kept = 0;
  for (uint16_t i = 0; i < pending_count_; ++i) {
    const uint16_t port_no = pending_ports_[i];
    TxBatch& b = batches_[port_no];
    if (b.count != 0 && now - b.first_tsc >= snap_->tx_flush_cycles) flush(port_no);
    if (b.count != 0) {
      pending_ports_[kept++] = port_no;
    } else {
      b.pending = false;
    }
  }
  pending_count_ = kept;
}

}  // namespace sluice
