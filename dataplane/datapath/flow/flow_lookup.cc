// EMC -> SMC -> classifier over a burst; refilling the upper tiers.
#include "dataplane/datapath/flow/flow_lookup.h"

#include <algorithm>

namespace sluice::flow {

absl::StatusOr<std::unique_ptr<FlowLookup>> FlowLookup::create(const FlowLookupConfig& config,
                                                               const MegaflowTable& table) {
  auto emc = Emc::create(config.emc);
  if (!emc.ok()) return emc.status();
  auto smc = Smc::create(config.smc);
  if (!smc.ok()) return smc.status();
  return std::unique_ptr<FlowLookup>(
      new FlowLookup(config, std::move(*emc), std::move(*smc), table));
}

uint32_t FlowLookup::lookupBurst(const FlowKey* keys, uint32_t n, MegaflowIndex* out,
                                 uint16_t* misses) {
  const uint8_t mode = policy_.mode();
  const bool emc_active = (mode & kTierEmc) != 0 && emc_->enabled();
  const bool smc_active = (mode & kTierSmc) != 0 && smc_->enabled();
  const bool measuring = policy_.measuring();
  const uint64_t t0 = measuring ? cycles_() : 0;
  // Pending list: well-formed packets, in order.
  uint32_t pending = 0;
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = kNoMegaflow;
    if (keys[i].parse_result == static_cast<uint8_t>(ParseResult::kOk)) {
      misses[pending++] = static_cast<uint16_t>(i);
    }
  }
  counters_.malformed += n - pending;

  uint32_t before = pending;
  if (emc_active) {
    pending = emc_->lookupBurst(keys, misses, pending, out, table_);
    counters_.emc_hits += before - pending;
  }

  if (pending > 0 && smc_active) {
    uint16_t tried[kMaxBurst];
    std::copy(misses, misses + pending, tried);
    before = pending;
    pending = smc_->lookupBurst(keys, misses, pending, out, table_);
    counters_.smc_hits += before - pending;
    if (before != pending && emc_->enabled()) {
      for (uint32_t j = 0; j < before; ++j) {
        const uint16_t i = tried[j];
        if (out[i] != kNoMegaflow) {
          emc_->insert(keys[i], out[i], table_.at(out[i]).generation.load(std::memory_order_relaxed));
        }
      }
    }
  }

  if (pending > 0 && classifier_ != nullptr) {
    uint16_t tried[kMaxBurst];
    std::copy(misses, misses + pending, tried);
    before = pending;
    const uint64_t searched = classifier_->stats().lookups_on_hits;
    pending = classifier_->lookupBurst(keys, misses, pending, out, table_);
    counters_.megaflow_hits += before - pending;
    counters_.subtable_lookups += classifier_->stats().lookups_on_hits - searched;
    if (before != pending) {
      for (uint32_t j = 0; j < before; ++j) {
        const uint16_t i = tried[j];
        if (out[i] != kNoMegaflow) cacheInUpperTiers(keys[i], out[i], smc_active);
      }
    }
  }
  counters_.misses += pending;
  policy_.record(measuring ? cycles_() - t0 : 0, n);
  if (rank_interval_ != 0 && classifier_ != nullptr && ++bursts_to_rank_ >= rank_interval_) {
    bursts_to_rank_ = 0;
    classifier_->rankSubtables();
  }
  return pending;
}

void FlowLookup::setCacheTiers(uint32_t emc_insert_inv_prob, bool smc_enable) {
  const uint8_t before = allowedTiers();
  emc_->setInsertInvProb(emc_insert_inv_prob);
  smc_->setEnabled(smc_enable);
  if (allowedTiers() != before) policy_ = TierPolicy(policy_config_, allowedTiers());
}

void FlowLookup::learn(const FlowKey& key, MegaflowIndex m) {
  cacheInUpperTiers(key, m, smc_->enabled());
}

// The EMC is refilled whatever the mode (at its insertion probability, so
// cheaply) to stay warm for the next probe; the SMC fully only while it is
// used, since refilling it costs a random write into a large table per
// packet, and 1 in smc_shadow_inv_prob hits while it is not.
void FlowLookup::cacheInUpperTiers(const FlowKey& key, MegaflowIndex m, bool smc_active) {
  if (smc_active || (shadow_threshold_ != 0 && prng_.next() <= shadow_threshold_)) {
    smc_->insert(key, m);
  }
  emc_->insert(key, m, table_.at(m).generation.load(std::memory_order_relaxed));
}

}  // namespace sluice::flow
