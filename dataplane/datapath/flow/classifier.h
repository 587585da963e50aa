// The megaflow classifier (OVS's dpcls): tuple-space search over subtables,
// one per distinct mask, each a hash table of masked keys -> megaflow index.
// Third and last lookup tier; a miss here is an upcall.
//
// One classifier per PMD, not per in-port. Sluice's decisions (route to a
// local pod, encapsulate towards a node, decapsulate) mostly do not depend on
// the in-port, so the slow path leaves in_port out of the mask where it can,
// and one megaflow then serves every pod port the PMD polls: fewer upcalls,
// fewer megaflows under the flow limit, and the same few masks are not
// repeated in a subtable set per port. A per-port classifier would only win
// when ports have very different mask populations (ranking per port); the
// ranking here is by hits across the PMD's ports, which is what the PMD pays
// for. One version per PMD also means one snapshot to publish per PMD.
//
// Invariant (as in OVS's megaflow model): installed megaflows never overlap,
// i.e. no packet key matches two of them. The slow path guarantees it by
// building each mask from exactly the fields its decision consulted. Hence
// there are no priorities and the first subtable that matches gives the
// answer; subtable order only affects speed, never the result.
//
// Threads and versions ("the PMD reads, a writer builds a new version"):
//   - A version that a PMD reads is immutable for everybody else: the PMD calls
//     only the const methods (lookupBurst, rankSubtables); lookups take no
//     lock and do no heap allocation.
//   - The control thread builds the next version with clone(), applies
//     insert()/remove() to it (these may allocate), and publishes it with a
//     release store of the pointer; the PMD picks it up at its quiescent point
//     (acquire), and the old version is freed after every reader has passed
//     one. insert()/remove() must never be called on a published version.
//   - The only state the PMD writes is its own statistics and the ranking
//     (subtable hit counts and order), declared mutable below. clone() reads
//     the hit counts (relaxed atomics) but not the order, which it recomputes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/flow/subtable.h"

namespace sluice::flow {

struct ClassifierConfig {
  // Each subtable costs one hash probe per missed packet, so a bound on them
  // bounds the miss cost (and keeps the order array fixed-size).
  uint32_t max_subtables = 64;
};

// PMD-written counters.
struct ClassifierStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  // Sum over hits of the subtables searched to find them (rank + 1), so
  // lookups_on_hits / hits is OVS's "avg. subtable lookups per megaflow hit".
  uint64_t lookups_on_hits = 0;
};

class Classifier {
 public:
  explicit Classifier(const ClassifierConfig& config = {});
  Classifier(const Classifier&) = delete;
  Classifier& operator=(const Classifier&) = delete;

  // --- control side (unpublished versions only) ---------------------------
  std::unique_ptr<Classifier> clone() const;
  // Adds megaflow m for (key AND mask). AlreadyExists for a duplicate,
  // ResourceExhausted when a new mask would exceed max_subtables.
  absl::Status insert(const FlowMask& mask, const FlowKey& key, MegaflowIndex m);
  // Removes the megaflow for (key AND mask); an emptied subtable goes away.
  absl::Status remove(const FlowMask& mask, const FlowKey& key);

  // --- PMD side -----------------------------------------------------------
  // Same contract as the caches: hits write out[idx[j]], misses are compacted
  // to the front of idx in their original order, their count is returned.
  // A hit on a megaflow the table says is dead counts as a miss.
  uint32_t lookupBurst(const FlowKey* keys, uint16_t* idx, uint32_t n, MegaflowIndex* out,
                       const MegaflowTable& table) const;
  // Re-sorts subtables by hits since the last call (most first) and starts a
  // new interval. Called periodically by the PMD (OVS: every second).
  void rankSubtables() const;

  // --- either side (reads) ------------------------------------------------
  uint32_t subtableCount() const { return static_cast<uint32_t>(subtables_.size()); }
  uint32_t size() const { return rules_; }
  // Masks in current search order (PMD, or control after quiescence).
  std::vector<FlowMask> searchOrder() const;
  const ClassifierStats& stats() const { return stats_; }

 private:
  int findSubtable(const FlowMask& mask) const;
  void orderByHits();

  ClassifierConfig config_;
  std::vector<std::unique_ptr<Subtable>> subtables_;  // stable slots; control-owned
  mutable std::vector<uint16_t> order_;               // search order; PMD-owned once published
  uint32_t rules_ = 0;
  mutable ClassifierStats stats_;
};

}  // namespace sluice::flow
