// The cached lookup pipeline of one PMD: EMC -> SMC -> megaflow classifier,
// over a burst of extracted keys, with the tier counters that say where each
// packet was resolved (exactly one tier per packet).
//
// Owned and used by one PMD thread. The classifier version it searches is
// swapped by that PMD at a quiescent point (setClassifier) after the control
// thread published a new one; the megaflow table is the PMD's own.
// Lower-tier hits refill the upper tiers: a classifier hit inserts into the
// SMC and (probabilistically) the EMC, an SMC hit into the EMC.
//
// How a PMD uses the flow components, per rx burst (n <= kMaxBurst):
//   PacketRef refs[n] from the mbufs (data, data_len, hash.rss if flagged);
//   r = extractFlowKeyRuns(refs, n, port_no, 0, keys, runs)  // one key per run
//   drop keys[k].result() != kOk with that reason // parseResultName()
//   m = lookup.lookupBurst(keys, r, out, misses)  // out[k]: megaflow or miss
//   apply table.at(out[k]).actions to run k's packets, record the hits on
//     the megaflows, and hand misses[0..m) to the upcall path.
// The tiers count the keys looked up (a run's first packet); the PMD counts
// a run's other packets itself (run hits, or misses with their run).
//
// Which tiers run is chosen per burst by a TierPolicy from the measured cost
// of each combination (see tier_policy.h): with many flows and few megaflows
// the classifier alone is the cheapest path, with few flows the EMC is.
#pragma once

#include <x86intrin.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "dataplane/datapath/flow/classifier.h"
#include "dataplane/datapath/flow/emc.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/flow/prng.h"
#include "dataplane/datapath/flow/smc.h"
#include "dataplane/datapath/flow/tier_policy.h"

namespace sluice::flow {

// The PMD's cycle counter; injectable so tests control what the policy sees.
using CycleFn = uint64_t (*)();
inline uint64_t readTsc() { return __rdtsc(); }

struct FlowLookupConfig {
  EmcConfig emc;
  SmcConfig smc;
  TierPolicyConfig policy;
  CycleFn cycles = &readTsc;
  // The classifier's subtables are re-ranked by hits every this many bursts
  // (~1M packets at 32 per burst, about OVS's once a second at line rate);
  // 0 = never (the PMD calls Classifier::rankSubtables itself).
  uint32_t rank_interval_bursts = 32768;
  // While the policy keeps the SMC's lookups off, 1 in this many classifier
  // hits may still refill it, so that its next probe measures a warmer
  // cache. Off by default: measured at 100k round-robin flows (bench/flow,
  // medians of 3, interleaved), refills at 1/8 helped one-megaflow-per-flow
  // traffic a little (161 -> 150 cycles/packet) but made the policy pick the
  // SMC for 100 shared megaflows where the classifier alone is cheaper
  // (54 -> 87). 0 = no refills while off.
  uint32_t smc_shadow_inv_prob = 0;
};

// Where the packets of all bursts so far were resolved. Each packet is
// counted in exactly one of these.
struct TierCounters {
  uint64_t emc_hits = 0;
  uint64_t smc_hits = 0;
  uint64_t megaflow_hits = 0;
  uint64_t misses = 0;     // no tier matched: the packet needs an upcall
  uint64_t malformed = 0;  // parse_result != kOk: never looked up
  uint64_t total() const { return emc_hits + smc_hits + megaflow_hits + misses + malformed; }

  // Not a tier: subtables searched summed over megaflow hits, kept here so it
  // survives classifier version switches. subtable_lookups / megaflow_hits
  // is OVS's "avg. subtable lookups per megaflow hit".
  uint64_t subtable_lookups = 0;
};

class FlowLookup {
 public:
  static absl::StatusOr<std::unique_ptr<FlowLookup>> create(const FlowLookupConfig& config,
                                                           const MegaflowTable& table);

  // PMD, at a quiescent point: the classifier version to search from now on.
  void setClassifier(const Classifier* classifier) { classifier_ = classifier; }

  // Resolves keys[0, n) (n <= kMaxBurst). out[i] is the megaflow of packet
  // i, or kNoMegaflow for a miss or a malformed packet. The indices of the
  // misses (not the malformed) are written to misses[] in packet order and
  // their count returned.
  uint32_t lookupBurst(const FlowKey* keys, uint32_t n, MegaflowIndex* out, uint16_t* misses);

  // After an upcall installed megaflow m for key: cache it (SMC, then EMC
  // with its usual probability) so the next packet of the flow hits early.
  void learn(const FlowKey& key, MegaflowIndex m);

  // PMD, at a quiescent point: the EMC's insertion probability (0: off) and
  // whether the SMC runs. Entries cached before stay; every hit is verified
  // against its megaflow anyway. The tier policy starts over when the set of
  // tiers it may choose from changed.
  void setCacheTiers(uint32_t emc_insert_inv_prob, bool smc_enable);

  const TierCounters& counters() const { return counters_; }
  const TierPolicy& policy() const { return policy_; }
  Emc& emc() { return *emc_; }
  Smc& smc() { return *smc_; }
  const Emc& emc() const { return *emc_; }
  const Smc& smc() const { return *smc_; }

 private:
  FlowLookup(const FlowLookupConfig& config, std::unique_ptr<Emc> emc, std::unique_ptr<Smc> smc,
             const MegaflowTable& table)
      : emc_(std::move(emc)), smc_(std::move(smc)), table_(table), cycles_(config.cycles),
        rank_interval_(config.rank_interval_bursts),
        shadow_threshold_(config.smc_shadow_inv_prob == 0
                              ? 0
                              : 0xffffffffU / config.smc_shadow_inv_prob),
        prng_(config.emc.seed ^ 0x5a5a5a5a5a5a5a5aULL), policy_config_(config.policy),
        policy_(config.policy, allowedTiers()) {}

  // The tiers that are switched on.
  uint8_t allowedTiers() const {
    return static_cast<uint8_t>((emc_->enabled() ? kTierEmc : 0) | (smc_->enabled() ? kTierSmc : 0));
  }

  void cacheInUpperTiers(const FlowKey& key, MegaflowIndex m, bool smc_active);

  std::unique_ptr<Emc> emc_;
  std::unique_ptr<Smc> smc_;
  const MegaflowTable& table_;
  const Classifier* classifier_ = nullptr;
  CycleFn cycles_;
  uint32_t rank_interval_;
  uint32_t bursts_to_rank_ = 0;  // bursts since the last ranking
  uint32_t shadow_threshold_;    // SMC refill while off when prng <= this (0: never)
  Prng prng_;
  TierPolicyConfig policy_config_;
  TierPolicy policy_;
  TierCounters counters_;
};

}  // namespace sluice::flow
