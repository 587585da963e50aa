// What a PMD shows control about individual packets when asked: packet trace
// (each traced packet's key, the tier that answered, its megaflow and
// actions or its screening verdict) and packet capture (the first bytes of
// packets received or sent on a port). Both are off unless control arms
// them; the PMD then reads one relaxed word per rx burst (and per output
// batch, for tx capture), so an unarmed tap costs one predictable branch.
//
// Records travel PMD -> control through bounded single-producer
// single-consumer rings (Lamport, as UpcallQueue): the PMD never waits; a
// full ring drops the record and counts it. Control sets a session's
// parameters (relaxed atomics, so a PMD reading them while control changes
// them sees old or new values, never torn ones) and then the armed bits; each
// record carries the session number it was made under, so a record a PMD made
// just before a disarm is recognised and discarded by the next session.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/pmd_counters.h"

namespace sluice {

// Bits of PmdTap::armed.
inline constexpr uint32_t kTapTrace = 1;
inline constexpr uint32_t kTapCaptureRx = 2;
inline constexpr uint32_t kTapCaptureTx = 4;

// Which packets a trace records, on the fields of the packet's flow key
// (network order; a zero field matches anything).
struct TapFilter {
  uint32_t ipv4_src = 0;
  uint32_t ipv4_dst = 0;
  uint16_t tp_src = 0;
  uint16_t tp_dst = 0;
  uint8_t ip_proto = 0;

  bool matches(const flow::FlowKey& k) const {
    return (ipv4_src == 0 || k.ipv4_src == ipv4_src) && (ipv4_dst == 0 || k.ipv4_dst == ipv4_dst) &&
           (tp_src == 0 || k.tp_src == tp_src) && (tp_dst == 0 || k.tp_dst == tp_dst) &&
           (ip_proto == 0 || k.ip_proto == ip_proto);
  }
};

// Where a traced packet's decision came from.
enum class TraceTier : uint8_t {
  kScreened = 0,  // decided before lookup (malformed, ARP, not IPv4)
  kRunHit = 1,    // same key as the previous packet of its burst
  kEmc = 2,
  kSmc = 3,
  kMegaflow = 4,
  kMiss = 5,  // no tier: translated inline from the snapshot's tables
};

// What became of a miss's upcall.
enum class TraceUpcall : uint8_t { kNone = 0, kSent = 1, kCoalesced = 2, kLost = 3 };

struct TraceRecord {
  flow::FlowKey key;      // the packet's key (its parse result; tunnel fields after decap)
  flow::FlowKey mf_key;   // the megaflow's masked match (hit) or the translation's (miss)
  flow::FlowMask mf_mask;
  flow::MegaflowActions actions;  // meaningful unless tier is kScreened
  uint64_t session = 0;
  uint64_t tsc = 0;
  uint32_t pkt_len = 0;
  uint32_t megaflow = flow::kNoMegaflow;  // index in the PMD's table (hits)
  uint16_t in_port = 0;
  uint16_t next = 0;      // kScreened: the port it goes to, or kNextDrop
  uint8_t reason = 0;     // kScreened and dropped: its DropReason
  uint8_t parse_result = 0;  // the key's ParseResult before screening
  TraceTier tier = TraceTier::kScreened;
  TraceUpcall upcall = TraceUpcall::kNone;
};

// Capture keeps at most this many bytes of a packet (snaplen is capped to it):
// the PMD's stated budget per captured packet is one copy of this size.
inline constexpr uint32_t kCaptureSnapMax = 2048;

struct CaptureSlot {
  uint64_t session = 0;
  uint64_t tsc = 0;
  uint32_t orig_len = 0;  // the packet's length
  uint32_t cap_len = 0;   // bytes kept in data
  uint16_t port = 0;
  uint8_t tx = 0;  // 1: offered to the port's tx queue; 0: received on it
  uint8_t data[kCaptureSnapMax];
};

// Bounded SPSC ring; slots are preallocated, claim/publish and front/pop
// never allocate.
template <typename T, uint32_t kCapacity>
class TapRing {
 public:
  TapRing() : slots_(new T[kCapacity]) {}
  TapRing(const TapRing&) = delete;
  TapRing& operator=(const TapRing&) = delete;

  // Producer: the next free slot, or null when full; publish() makes it visible.
  T* claim() {
    const uint32_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == kCapacity) return nullptr;
    return &slots_[head & (kCapacity - 1)];
  }
  void publish() { head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  // Consumer: the oldest record, or null when empty; pop() frees it.
  const T* front() const {
    const uint32_t tail = tail_.load(std::memory_order_relaxed);
    if (head_.load(std::memory_order_acquire) == tail) return nullptr;
    return &slots_[tail & (kCapacity - 1)];
  }
  void pop() { tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

 private:
  static_assert((kCapacity & (kCapacity - 1)) == 0, "indices wrap with a mask");
  alignas(64) std::atomic<uint32_t> head_{0};
  alignas(64) std::atomic<uint32_t> tail_{0};
  std::unique_ptr<T[]> slots_;
};

struct PmdTap {
  static constexpr uint32_t kTraceRecords = 256;  // 96 KiB
  static constexpr uint32_t kCaptureSlots = 512;  // 1 MiB

  // Control writes, the PMD reads once per rx burst (kTap* bits).
  alignas(64) std::atomic<uint32_t> armed{0};
  // A session's parameters: written by control before it arms the session.
  std::atomic<uint64_t> trace_session{0};
  std::atomic<uint16_t> trace_port{0};
  std::atomic<uint32_t> filter_ipv4_src{0}, filter_ipv4_dst{0};
  std::atomic<uint16_t> filter_tp_src{0}, filter_tp_dst{0};
  std::atomic<uint8_t> filter_ip_proto{0};
  std::atomic<uint64_t> capture_session{0};
  std::atomic<uint16_t> capture_port{0};
  std::atomic<uint32_t> snaplen{kCaptureSnapMax};
  // Packets still to record: set by control when arming, counted down by
  // the PMD (its only writer while armed).
  std::atomic<uint32_t> trace_left{0};
  std::atomic<uint32_t> capture_left{0};
  // Records the PMD made but found no room for (PMD-written, monotonic).
  Counter trace_dropped;
  Counter capture_dropped;

  TapRing<TraceRecord, kTraceRecords> traces;
  TapRing<CaptureSlot, kCaptureSlots> captures;

  TapFilter filter() const {
    TapFilter f;
    f.ipv4_src = filter_ipv4_src.load(std::memory_order_relaxed);
    f.ipv4_dst = filter_ipv4_dst.load(std::memory_order_relaxed);
    f.tp_src = filter_tp_src.load(std::memory_order_relaxed);
    f.tp_dst = filter_tp_dst.load(std::memory_order_relaxed);
    f.ip_proto = filter_ip_proto.load(std::memory_order_relaxed);
    return f;
  }
};

}  // namespace sluice
