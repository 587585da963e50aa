// A megaflow: a masked key, its mask and the decision the slow path made for
// every packet it matches, plus the per-PMD table of megaflow records the
// caches and the classifier point into by index.
//
// Threads. A MegaflowTable belongs to one PMD (as OVS keeps one flow table per
// PMD thread): that PMD reads records and writes their statistics; the control
// thread installs and kills records. Their protocol, which keeps lookups free
// of locks:
//   install (control): take a free slot, write mask/key/actions while the slot
//     is not alive, generation+1, then alive.store(true, release).
//   kill (control): alive.store(false, release) and generation+1 (release).
//     The caches may still hold the index; they drop it lazily when they see
//     the record dead or its generation changed.
//   Both steps move the generation, so each life of a slot has its own: a
//     cache that checked alive and read the generation only afterwards (a kill
//     in between: it read the dead value) can never see that value again once
//     the slot is reused, and the EMC, which does not compare keys with the
//     megaflow's match, cannot hand an old key the slot's next megaflow.
//   recycle (control): only after every PMD that reads this table has passed
//     a quiescent point since the kill. No PMD can then be in the middle of
//     reading the old contents, and a PMD that loads alive/generation again
//     sees the kill; so rewriting the record on the next install races with
//     no reader.
//   PMD: load alive (acquire) before reading mask/key/actions; an EMC entry
//     also compares the generation it stored at insertion.
// Statistics (packets, bytes, last use) are written by the owning PMD only;
// they are relaxed atomics so that the control thread may read them at any
// time (for sluicectl flows and idle expiry) without a data race.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataplane/datapath/flow/flow_key.h"

namespace sluice::flow {

// Index of a megaflow record in its PMD's MegaflowTable.
using MegaflowIndex = uint32_t;
inline constexpr MegaflowIndex kNoMegaflow = 0xffffffffU;

// The decision cached for a megaflow. A placeholder with room for what the
// action stage will need; the flow components never interpret it.
struct MegaflowActions {
  // kEncap: VXLAN-encapsulate toward tunnel `arg` and output on `out_port`
  // (the uplink); see datapath/overlay/uplink_stage.h. kExternal: toward the
  // external network's gateway on `out_port` (the uplink), its MAC and VLAN
  // from the snapshot (datapath/external_network.h).
  enum class Kind : uint8_t { kDrop = 0, kOutput = 1, kEncap = 2, kExternal = 3 };
  Kind kind = Kind::kDrop;
  uint8_t rewrite_flags = 0;  // which header rewrites apply (owned by the action stage)
  uint16_t out_port = 0;      // datapath port number for kOutput
  uint16_t drop_reason = 0;   // named drop reason for kDrop (action stage's list)
  // kOutput: the longest frame (Ethernet header included) the out port
  // takes, its MTU + 14, decided at translation so that the action stage
  // compares each packet's length with a value on the line it already read.
  // Longer frames leave by the action stage's cold path (ICMP
  // "fragmentation needed" / "packet too big"). The default takes any.
  uint16_t max_frame = 0xffff;
  uint32_t arg = 0;           // e.g. a next-hop or tunnel index
};

// Mask words a megaflow can match in compact form (see Megaflow::compact_*).
inline constexpr uint32_t kCompactWords = 4;

struct alignas(64) Megaflow {
  // Line 0: read on every hit.
  std::atomic<bool> alive{false};       // see the protocol above
  std::atomic<uint32_t> generation{0};  // +1 on every install and kill; EMC entries compare it
  MegaflowActions actions;              // written only while not alive
  uint8_t n_compact = 0;                // mask words in compact form; > kCompactWords: use mask/key
  uint8_t compact_idx[kCompactWords] = {};  // which key words they are
  std::atomic<uint64_t> packets{0};     // packets that hit (any tier); PMD-written
  std::atomic<uint64_t> bytes{0};       // their bytes; PMD-written
  std::atomic<uint64_t> last_used_tsc{0};  // TSC of the last hit; PMD-written
  std::atomic<uint64_t> installed_tsc{0};  // TSC at install; control-written
  // Line 1: the match in compact form, so that verifying an SMC candidate
  // reads this one line instead of the four of mask and key (a router's
  // masks cover 1-4 words). Measured (bench/flow BM_SmcLookup, one megaflow
  // per flow): 100k flows ~81 -> ~57 cycles/packet, 10k ~50 -> ~43.
  uint64_t compact_mask[kCompactWords] = {};
  uint64_t compact_key[kCompactWords] = {};
  // Lines 2..5: the match in full (control-side dumps; masks over more words).
  FlowMask mask;
  FlowKey key;  // already masked: key == applyMask(key, mask)

  // True when the packet key falls in this megaflow (mask and compare only;
  // liveness is the caller's business).
  bool matches(const FlowKey& k) const {
    if (n_compact > kCompactWords) return maskedEqual(k, mask, key);
    const KeyWord* w = k.words();
    uint64_t diff = 0;
    for (uint32_t i = 0; i < n_compact; ++i) {
      diff |= (w[compact_idx[i]] & compact_mask[i]) ^ compact_key[i];
    }
    return diff == 0;
  }

  // Accounts n packets of `bytes_total` bytes at time tsc. Owning PMD only:
  // load+store instead of fetch_add, since there is a single writer.
  void recordHits(uint32_t n, uint64_t bytes_total, uint64_t tsc) {
    packets.store(packets.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    bytes.store(bytes.load(std::memory_order_relaxed) + bytes_total, std::memory_order_relaxed);
    last_used_tsc.store(tsc, std::memory_order_relaxed);
  }
};

static_assert(sizeof(Megaflow) == 6 * 64, "header, compact match, mask and key lines");

class MegaflowTable {
 public:
  // capacity bounds the number of megaflows of one PMD (the flow limit).
  explicit MegaflowTable(uint32_t capacity);
  MegaflowTable(const MegaflowTable&) = delete;
  MegaflowTable& operator=(const MegaflowTable&) = delete;

  uint32_t capacity() const { return capacity_; }
  // Live records (control thread's view).
  uint32_t size() const { return live_; }
  // Slots an install can take now (neither live nor waiting for recycle).
  uint32_t freeSlots() const { return static_cast<uint32_t>(free_.size()); }

  // --- PMD side -----------------------------------------------------------
  const Megaflow& at(MegaflowIndex i) const { return records_[i]; }
  Megaflow& at(MegaflowIndex i) { return records_[i]; }
  bool isAlive(MegaflowIndex i) const { return records_[i].alive.load(std::memory_order_acquire); }

  // --- control side -------------------------------------------------------
  // Writes a new live record (key is masked here). ResourceExhausted when
  // every slot is taken or waiting for recycle.
  absl::StatusOr<MegaflowIndex> install(const FlowKey& key, const FlowMask& mask,
                                        const MegaflowActions& actions, uint64_t now_tsc = 0);
  // Marks a record dead; caches stop returning it (see the protocol above).
  void kill(MegaflowIndex i);
  // Calls f(index, record) for every live record (control thread: dumps for
  // `sluicectl flows`, idle expiry from last_used_tsc, revalidation).
  template <typename F>
  void forEachLive(F&& f) const {
    for (uint32_t i = 0; i < capacity_; ++i) {
      if (records_[i].alive.load(std::memory_order_relaxed)) f(static_cast<MegaflowIndex>(i), records_[i]);
    }
  }
  // Returns a killed slot to the free list; only after a grace period.
  // FailedPrecondition for a live or out-of-range index.
  absl::Status recycle(MegaflowIndex i);

 private:
  uint32_t capacity_;
  uint32_t live_ = 0;
  std::unique_ptr<Megaflow[]> records_;
  std::vector<MegaflowIndex> free_;  // control thread only
};

}  // namespace sluice::flow
