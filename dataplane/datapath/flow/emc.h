// Exact-match cache (EMC): the first and cheapest lookup tier. A packet key's
// whole match area maps straight to the megaflow that handled it last time.
//
// One Emc per PMD, used only by that PMD's thread (lookup, insert, clear):
// no atomics, no locks. Entries hold a megaflow index plus the generation the
// megaflow had at insertion; a hit on a dead megaflow, or on a recycled slot
// (generation moved on), empties the entry and counts as a miss — the control
// thread never has to find or flush EMC entries.
//
// Shape: `entries` slots (power of two, default 8192 as OVS), each key may
// live in one of two slots (two independent bit ranges of its hash), so two
// hot keys that collide on one slot can still coexist.
// Insertion is probabilistic (OVS's emc-insert-inv-prob): with many flows an
// always-insert EMC evicts itself continuously and costs more than it saves;
// inserting 1 in N keeps the heavy hitters (seen often, so inserted soon).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/flow/prng.h"

namespace sluice::flow {

struct EmcConfig {
  uint32_t entries = 8192;          // power of two, >= 2
  uint32_t insert_inv_prob = 100;   // 1 = always, N = on average 1 in N, 0 = EMC off
  uint64_t seed = 0x5eed;           // per-PMD PRNG seed (tests fix it)
};

// Counters of this tier; written by the owning PMD only.
struct EmcStats {
  uint64_t hits = 0;          // lookups answered here
  uint64_t misses = 0;        // lookups passed on (includes dead hits)
  uint64_t dead = 0;          // hits on a dead/recycled megaflow, emptied lazily
  uint64_t inserts = 0;       // entries written (new or updated)
  uint64_t insert_skips = 0;  // insertions the coin flip declined
  uint64_t evictions = 0;     // inserts that overwrote another live key
};

// Two cache lines. What a probe reads first (hash, megaflow) leads the
// first line: a probe whose hash differs touches only that line.
struct alignas(64) EmcEntry {
  uint32_t hash;                // the packet key's hash (cheap pre-check)
  MegaflowIndex megaflow;       // kNoMegaflow when empty
  uint32_t generation;          // megaflow generation at insertion
  uint32_t pad;
  uint64_t words[kMatchWords];  // the packet key's match area (16-byte aligned)
};
static_assert(sizeof(EmcEntry) == 128);

class Emc {
 public:
  // InvalidArgument unless entries is a power of two >= 2.
  static absl::StatusOr<std::unique_ptr<Emc>> create(const EmcConfig& config);

  // Whether lookups run at all (insert_inv_prob != 0).
  bool enabled() const { return inv_prob_ != 0; }
  uint32_t insertInvProb() const { return inv_prob_; }
  // Changes the insertion probability at run time (0 switches the EMC off;
  // entries stay, unused, until clear()).
  void setInsertInvProb(uint32_t inv_prob);

  // Looks up keys[idx[j]] for j < n. Hits write out[idx[j]]; the misses are
  // compacted to the front of idx in their original order and their count
  // is returned. With the EMC off, returns n and touches nothing.
  uint32_t lookupBurst(const FlowKey* keys, uint16_t* idx, uint32_t n, MegaflowIndex* out,
                       const MegaflowTable& table);

  // Caches key -> megaflow with the configured probability. Returns whether
  // an entry was written.
  bool insert(const FlowKey& key, MegaflowIndex megaflow, uint32_t generation);

  void clear();
  uint32_t entries() const { return mask_ + 1; }
  uint32_t occupancy() const;  // non-empty entries; O(entries), for tests and stats
  const EmcStats& stats() const { return stats_; }

 private:
  Emc(const EmcConfig& config, uint32_t shift);
  uint32_t slot0(uint32_t hash) const { return hash & mask_; }
  // Fibonacci hashing of the whole hash: high bits independent of slot0's low ones.
  uint32_t slot1(uint32_t hash) const { return (hash * 0x9e3779b1U) >> shift_; }
  static bool sameKey(const EmcEntry& e, const FlowKey& k);

  std::vector<EmcEntry> table_;
  uint32_t mask_;
  uint32_t shift_;            // 32 - log2(entries)
  uint32_t inv_prob_;
  uint32_t insert_threshold_; // insert when prng <= this
  Prng prng_;
  EmcStats stats_;
};

}  // namespace sluice::flow
