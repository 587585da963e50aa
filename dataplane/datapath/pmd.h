// A PMD (poll-mode driver) thread: polls its rx queues, runs each burst
// through the pipeline and sends the results in per-port output batches.
// Its rx queues are polled as rx_schedule.h decides: the busy ones every
// iteration, the idle ones a few at a time in turn.
// Runs on one dedicated lcore; everything it touches is either its own (this
// object, its counters, its flow caches) or an immutable snapshot (see
// pmd_snapshot.h). No heap, locks (except a shared tx queue's, see
// TxPortSlot), exceptions or syscalls (except the sleep of a PMD whose
// queues run light, when pmd-max-sleep-us allows one).
//
// The pipeline, per rx burst (each stage a function over the burst that
// writes one next-step per packet):
//   takeMarked    (partial offload only) packets whose NIC mark names a live
//                 megaflow take its actions at once; the rest go on
//   uplinkRx      (the uplink only) VXLAN to our VTEP is decapsulated in
//                 place with its tunnel metadata kept for the key; ARP for
//                 the VTEP answered or punted; anything else dropped by reason
//   extractKeys   flow key of every packet (flow/flow_key.h), hash once
//   screen        malformed key -> drop with its reason; VLAN-tagged or
//                 neither IPv4 nor ARP -> drop unsupported_ethertype;
//                 ARP -> answered in place (per packet, never cached);
//                 IPv4 -> on to lookup
//   lookup        EMC -> SMC -> megaflow classifier (flow/flow_lookup.h);
//                 a hit takes its megaflow's actions; a miss is translated
//                 inline from the snapshot's tables (flow_translate.h) and
//                 its key sent to control as an upcall (upcall_gate.h,
//                 upcall_queue.h) unless over the port's or PMD's upcall
//                 rate (then only counted: the packet is forwarded anyway)
//   act           output -> the out port's MTU checked (longer: answered
//                 with fragmentation needed / packet too big), L3 rewrite,
//                 next = port; drop -> reason (TTL expired, or an unused
//                 pod address: answered with ICMP Time Exceeded / Destination
//                 Unreachable where allowed, pmd_icmp.cc)
// then drops are counted and freed, the rest go to the output batches.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>

#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/fixed_array.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/icmp/icmp_error_limiter.h"
#include "dataplane/datapath/ipv4_fragment.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/mark_table.h"
#include "dataplane/datapath/pmd_context.h"
#include "dataplane/datapath/pmd_counters.h"
#include "dataplane/datapath/pmd_snapshot.h"
#include "dataplane/datapath/pmd_tap.h"
#include "dataplane/datapath/rx_schedule.h"
#include "dataplane/datapath/upcall_gate.h"
#include "dataplane/datapath/upcall_queue.h"
#include "dataplane/datapath/overlay/uplink_stage.h"

namespace sluice {

class Pmd {
 public:
  // `context` must have its flow caches and outlive this object.
  explicit Pmd(PmdContext& context)
      : mailbox_(context.mailbox), counters_(context.counters), lookup_(*context.lookup),
        megaflows_(*context.megaflows), upcalls_(context.upcalls), gate_(context.gate), marks_(context.marks),
        tap_(context.tap), fragment_pool_(context.fragment_pool), packet_pool_(context.packet_pool),
        pmd_index_(context.index), rx_schedule_(context.counters, context.gate.tsc_hz),
        max_sleep_us_(context.max_sleep_us),
        icmp_limiter_({context.icmp_errors.tsc_hz != 0 ? context.icmp_errors.tsc_hz : context.gate.tsc_hz,
                       context.icmp_errors.rate_per_sec, context.portTableSize()}),
        echo_limiter_({context.icmp_errors.tsc_hz != 0 ? context.icmp_errors.tsc_hz : context.gate.tsc_hz,
                       context.icmp_errors.rate_per_sec, context.portTableSize()}),
        batches_(context.portTableSize()), pending_ports_(context.portTableSize()) {}

  // The poll loop; returns when the mailbox's stop flag is set, after
  // flushing every batch. Suitable for rte_eal_remote_launch via launch().
  void run();
  static int launch(void* pmd);

 private:
  // Packets waiting for one output port. Indexed by port number.
  struct TxBatch {
    uint16_t count = 0;
    bool pending = false;  // listed in pending_ports_
    uint64_t first_tsc = 0;  // when the oldest packet entered (for tx-flush-interval)
    rte_mbuf* pkts[kBurstSize];
  };

  // After an iteration whose queues all ran light: sleeps a little longer
  // than after the previous one, up to max_sleep_us_ (Open vSwitch's
  // pmd-maxsleep), flushing the output batches first; returns the
  // TSC on waking (`now` unchanged when sleeping is off).
  uint64_t restWhileLight(uint64_t now);
  void pickUpSnapshot();
  // The snapshot's live settings, when control changed them (quiescent point).
  void applySettings(const PmdSettings& settings);
  // Runs one rx burst through the pipeline; `t` is the TSC when it was
  // received, the result the TSC at its end (stage cycles in between).
  uint64_t processBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now, uint64_t t);
  // The stages of a burst. Extraction groups consecutive packets with one
  // key into runs (keys_[r], runs_[r]); decisions are made once per run
  // (decisions_[r]): screened before lookup (malformed, ARP, not IPv4), or
  // looked up (cache tiers, else an inline translation and an upcall); the
  // actions then touch each packet and queue it for output (or drop it).
  uint16_t extractKeys(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n, uint64_t breaks);
  void decideRuns(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs, uint64_t now);
  // Decides the runs before lookup (malformed, ARP, not IPv4: marked
  // screened); returns how many runs are left to look up.
  uint16_t screen(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs);
  // Looks up runs [first, end).
  void lookupRuns(uint16_t in_port, rte_mbuf* const* pkts, uint16_t first, uint16_t end, uint64_t now);
  // decideRuns for a burst being traced (pmd_trace.cc): the same decisions,
  // one run at a time so that each run's tier is known, and a record per
  // packet that passes the trace's filter.
  void decideRunsTraced(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs, uint64_t now);
  // Copies packets of the capture's port into the capture ring (pmd_trace.cc).
  void capturePackets(uint16_t port_no, rte_mbuf* const* pkts, uint16_t n, bool tx);
  // Applies each run's decision to its packets and queues them for output
  // (or frees them, counted by reason); returns how many were dropped.
  uint16_t act(uint16_t in_port, rte_mbuf* const* pkts, uint16_t n_runs, uint64_t now);
  // One megaflow's actions on `count` packets that share its key (a run, or
  // one marked packet): queued for output, or freed and counted by reason;
  // returns how many were dropped. key_hash is the key's (encap derives the
  // outer source port from it). kMayEncap false where only output and drop
  // megaflows arrive (the mark branch), which then tests for nothing else.
  // in_port: where the packets came in (an ICMP error goes back there).
  // Defined in pmd_actions.h, inline into both callers.
  template <bool kMayEncap>
  uint16_t takeActions(const flow::MegaflowActions& a, rte_mbuf* const* pkts, uint16_t count, uint32_t key_hash,
                       uint16_t in_port, uint64_t now);
  // The encap action over a run of one megaflow's packets, inner IPv4 or
  // IPv6, over an IPv4 or (kOuterIpv6) IPv6 underlay (pmd_actions.h);
  // returns how many were dropped.
  template <bool kInnerIpv6, bool kOuterIpv6>
  uint16_t encapRun(const flow::MegaflowActions& a, rte_mbuf* const* pkts, uint16_t count, uint32_t key_hash,
                    uint16_t in_port, uint64_t now);
  // Frees a packet, counted under its drop reason (pmd_actions.h).
  void dropPacket(rte_mbuf* m, DropReason reason);
  // The ICMP errors the PMD sends about a packet it drops (pmd_icmp.cc).
  enum class IcmpAnswer : uint8_t {
    kTimeExceeded,  // TTL / hop limit expired
    kTooBig,        // IPv4 fragmentation needed (DF set) / ICMPv6 packet too big, with an MTU
    kUnreachable,   // IPv4 host unreachable / ICMPv6 address unreachable
  };
  // Turns m (already counted as a drop) into the error back out of in_port
  // where the rules and the limiter allow, else frees it.
  void answerWithError(rte_mbuf* m, uint16_t in_port, uint64_t now, IcmpAnswer answer, uint16_t mtu);
  // Packets whose TTL expired (pmd_icmp.cc): counted as ttl_exceeded drops,
  // and each answered with an ICMP Time Exceeded back out of in_port where
  // the rules and the limiter allow, else freed. Out of line: the rare path.
  [[gnu::noinline, gnu::cold]] void dropExpired(rte_mbuf* const* pkts, uint16_t count, uint16_t in_port, uint64_t now);
  // Packets to an address of the pod CIDR that no pod holds: no_route drops,
  // each answered with Destination Unreachable likewise (pmd_icmp.cc).
  [[gnu::noinline, gnu::cold]] void dropUnreachable(rte_mbuf* const* pkts, uint16_t count, uint16_t in_port,
                                                    uint64_t now);
  // Echo requests to the gateway (pmd_icmp.cc): each answered with its echo
  // reply back out of in_port within the PMD's echo rate (counted as
  // gateway_echo_answered), else gateway_echo_rate_limited, or to_gateway
  // when it may not be answered; all are consumed (returns count).
  [[gnu::noinline, gnu::cold]] uint16_t answerEcho(rte_mbuf* const* pkts, uint16_t count, uint16_t in_port,
                                                   uint64_t now);
  // An output action's packets of which at least one is longer than
  // a.max_frame (pmd_icmp.cc): those that fit are forwarded as the action
  // says, the rest dropped and answered with fragmentation needed / packet
  // too big; returns how many were dropped.
  [[gnu::noinline, gnu::cold]] uint16_t outputOversize(const flow::MegaflowActions& a, rte_mbuf* const* pkts,
                                                       uint16_t count, uint16_t in_port, uint64_t now);
  // The external action over a run of one megaflow's packets (pmd_overlay.cc):
  // rewritten for the external gateway (uplink_stage.h externalRewrite) and
  // output on the uplink, the oversize ones as outputOversize does; returns
  // how many were dropped. Out of line: no pod-to-pod or overlay packet
  // takes it.
  [[gnu::noinline]] uint16_t externalRun(const flow::MegaflowActions& a, rte_mbuf* const* pkts, uint16_t count,
                                         uint16_t in_port, uint64_t now);
  // Sends one packet of an output or external action that fits its MTU:
  // the action's rewrite, then its out port; false (m dropped and counted)
  // when the external rewrite refuses it (pmd_icmp.cc).
  bool forwardOne(const flow::MegaflowActions& a, rte_mbuf* m, uint64_t now);
  // A packet the encap action refused as larger than the overlay MTU
  // (pmd_icmp.cc): IPv4 without DF is fragmented to the overlay MTU and each
  // fragment encapsulated (returns 0); the rest is counted as
  // overlay_mtu_exceeded, answered with fragmentation needed / packet too
  // big (the overlay MTU), and returns 1 (dropped).
  [[gnu::noinline, gnu::cold]] uint16_t overlayOversize(const flow::MegaflowActions& a, rte_mbuf* m,
                                                        uint32_t key_hash, uint16_t in_port, uint64_t now);
  // Fragments m (IPv4, DF clear) to `mtu` (pmd_icmp.cc); the fragments are
  // left in fragments_ (returns their count), or m is dropped as
  // fragmentation_failed (returns 0).
  uint32_t fragment(rte_mbuf* m, uint16_t mtu);
  // The uplink's VXLAN/ARP stage (pmd_overlay.cc): decapsulated packets are
  // compacted to the front of pkts (returns their count), the rest are
  // counted and dropped, answered or punted here.
  uint16_t uplinkRx(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now);
  // Control's frames for the uplink into its output batch (this PMD is the
  // one the overlay snapshot gave the control tx ring).
  void sendControlFrames(uint64_t now);
  // Partial offload (pmd_mark.cc): packets whose NIC mark names a
  // live megaflow take its actions here; the rest are compacted to the front
  // of pkts (returns their count) for the normal pipeline.
  uint16_t takeMarked(uint16_t in_port, rte_mbuf** pkts, uint16_t n, uint64_t now);
  // A packet for an empty batch: when it waits from, and the batch listed
  // for flushing unless it still is.
  void startBatch(TxBatch& b, uint16_t port_no, uint64_t now);
  void enqueue(uint16_t port_no, rte_mbuf* m, uint64_t now);
  void enqueueRun(uint16_t port_no, rte_mbuf* const* pkts, uint16_t n, uint64_t now);  // n packets, in order
  void flush(uint16_t port_no);
  void flushAll();
  void flushExpired(uint64_t now);

  PmdMailbox& mailbox_;
  PmdCounters& counters_;
  flow::FlowLookup& lookup_;
  flow::MegaflowTable& megaflows_;
  UpcallQueue& upcalls_;
  UpcallGate gate_;
  const offload::MarkTable* marks_;
  PmdTap& tap_;
  rte_mempool* fragment_pool_;  // where IPv4 fragments come from (null: none made)
  rte_mempool* packet_pool_;    // where vhost-user ports' received packets are copied to
  uint32_t pmd_index_;
  const PmdSnapshot* snap_ = nullptr;
  RxSchedule rx_schedule_;  // which of snap_'s rx queues each iteration polls
  uint32_t max_sleep_us_;  // pmd-max-sleep-us (0: never sleep)
  uint32_t sleep_us_ = 0;  // length of the last sleep; 0 after a full burst
  // The ICMP errors this PMD may still send, each in-port within its share
  // (its port count follows the snapshot's rx queues, as the upcall gate's).
  IcmpErrorLimiter icmp_limiter_;
  // The gateway's echo replies, at the same rate (icmp-error-rate) but in a
  // bucket of their own: a ping flood cannot starve the errors (which PMTU
  // discovery depends on), nor errors the replies. Its port count stays 1:
  // one bucket for the PMD, as before the errors were shared out.
  IcmpErrorLimiter echo_limiter_;
  uint64_t grace_seen_ = 0;  // the mailbox's grace_request passed last
  uint64_t settings_generation_ = 0;  // of the live settings applied last (0: as made)
  const flow::Classifier* classifier_ = nullptr;
  // The tier counters already copied into counters_ (FlowLookup keeps running
  // totals; the PMD publishes their growth once per burst).
  flow::TierCounters published_tiers_;
  // One batch per port number (max-ports of them, most never used), and the
  // numbers of those that have held a packet since the last flushAll, in the
  // order they got one: flushing visits only these, so its cost follows the
  // ports a PMD sends to, not the size of the table. A batch flushed because
  // it filled stays listed (empty) until the next flushAll or flushExpired.
  FixedArray<TxBatch> batches_;
  FixedArray<uint16_t> pending_ports_;
  uint16_t pending_count_ = 0;
  // The burst's runs and their flow keys (4 KiB): scratch, here rather than
  // on the stack because of the keys' 64-byte alignment and size.
  static_assert(kBurstSize <= flow::kMaxBurst);
  flow::FlowKey keys_[kBurstSize];
  flow::PacketRun runs_[kBurstSize];
  // What each run's packets get: a megaflow's (or an inline translation's)
  // actions, or, when action is null, a decision made before lookup.
  struct RunDecision {
    const flow::MegaflowActions* action;
    flow::MegaflowIndex flow;  // the megaflow a hit took its action from (for trace)
    uint16_t next;
    DropReason reason;
  };
  RunDecision decisions_[kBurstSize];
  // Inline translations of the burst's misses (the missed packets' context:
  // preallocated, never per-packet heap).
  FlowTranslation missed_[kBurstSize];
  // The uplink stage's per-burst scratch: tunnel metadata of the
  // decapsulated packets, and what it handed back.
  vxlan::TunnelMeta tun_meta_[kBurstSize];
  vxlan::UplinkRxOut uplink_out_;
  // The fragments of the one datagram being fragmented (cold path).
  rte_mbuf* fragments_[kMaxIpv4Fragments];
};

}  // namespace sluice
