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
  // Pending list: well-formed packets, in order.
  uint32_t pending = 0;
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = kNoMegaflow;
    if (keys[i].parse_result == static_cast<uint8_t>(ParseResult::kOk)) {
      misses[pending++] = static_cast<uint16_t>(i);
    }
  }
  counters_.malformed += n - pending;

  const bool emc_active = emcActive();
  uint32_t before = pending;
  if (emc_active) {
    pending = emc_->lookupBurst(keys, misses, pending, out, table_);
    counters_.emc_hits += before - pending;
    emcWindow(before, before - pending);
  }

  if (pending > 0 && smc_->enabled()) {
    uint16_t tried[kMaxBurst];
    std::copy(misses, misses + pending, tried);
    before = pending;
    pending = smc_->lookupBurst(keys, misses, pending, out, table_);
    counters_.smc_hits += before - pending;
    if (before != pending && emc_active) {
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
    pending = classifier_->lookupBurst(keys, misses, pending, out, table_);
    counters_.megaflow_hits += before - pending;
    if (before != pending) {
      for (uint32_t j = 0; j < before; ++j) {
        const uint16_t i = tried[j];
        if (out[i] != kNoMegaflow) cacheInUpperTiers(keys[i], out[i], emc_active);
      }
    }
  }
  counters_.misses += pending;
  return pending;
}

void FlowLookup::learn(const FlowKey& key, MegaflowIndex m) {
  cacheInUpperTiers(key, m, emc_pause_left_ == 0);
}

void FlowLookup::cacheInUpperTiers(const FlowKey& key, MegaflowIndex m, bool emc_active) {
  smc_->insert(key, m);
  if (emc_active) {
    emc_->insert(key, m, table_.at(m).generation.load(std::memory_order_relaxed));
  }
}

bool FlowLookup::emcActive() {
  if (!emc_->enabled()) return false;
  if (emc_pause_left_ == 0) return true;
  --emc_pause_left_;
  ++counters_.emc_paused_bursts;
  return false;
}

void FlowLookup::emcWindow(uint32_t lookups, uint32_t hits) {
  if (config_.emc_min_hit_pct == 0) return;
  window_lookups_ += lookups;
  window_hits_ += hits;
  if (window_lookups_ < config_.emc_window) return;
  if (window_hits_ * 100 < window_lookups_ * config_.emc_min_hit_pct) {
    emc_pause_left_ = config_.emc_pause_bursts;
    ++counters_.emc_pauses;
  }
  window_lookups_ = 0;
  window_hits_ = 0;
}

}  // namespace sluice::flow
