// Signature match cache: staged burst lookup (bucket prefetch → signature
// scan → verify against the megaflow) and insertion.
#include "dataplane/datapath/flow/smc.h"

#include <bit>
#include <cstring>

#include "absl/status/status.h"

namespace sluice::flow {

absl::StatusOr<std::unique_ptr<Smc>> Smc::create(const SmcConfig& config) {
  if (config.entries < kSmcWays || !std::has_single_bit(config.entries)) {
    return absl::InvalidArgumentError("SMC entries must be a power of two >= 8");
  }
  return std::unique_ptr<Smc>(new Smc(config));
}

Smc::Smc(const SmcConfig& config)
    : buckets_(config.entries / kSmcWays), bucket_mask_(config.entries / kSmcWays - 1),
      enabled_(config.enabled) {
  clear();
}

void Smc::clear() {
  for (SmcBucket& b : buckets_) {
    std::memset(&b, 0, sizeof(b));
    for (MegaflowIndex& m : b.megaflow) m = kNoMegaflow;
  }
}

uint32_t Smc::lookupBurst(const FlowKey* keys, uint16_t* idx, uint32_t n, MegaflowIndex* out,
                          const MegaflowTable& table) {
  if (!enabled_) return n;
  for (uint32_t j = 0; j < n; ++j) {
    __builtin_prefetch(&buckets_[bucketOf(keys[idx[j]].hash)]);
  }
  // Candidate megaflow per pending key (first live signature match), so the
  // megaflow records can be prefetched before the verify pass.
  MegaflowIndex cand[kMaxBurst];
  for (uint32_t j = 0; j < n; ++j) {
    const FlowKey& k = keys[idx[j]];
    const SmcBucket& b = buckets_[bucketOf(k.hash)];
    const uint16_t sig = signature(k.hash);
    cand[j] = kNoMegaflow;
    for (uint32_t w = 0; w < kSmcWays; ++w) {
      if (b.sig[w] == sig && b.megaflow[w] != kNoMegaflow) {
        cand[j] = b.megaflow[w];
        // Header and compact match; masks over more words read mask/key too.
        __builtin_prefetch(&table.at(cand[j]));
        __builtin_prefetch(&table.at(cand[j]).compact_mask);
        break;
      }
    }
  }
  uint32_t misses = 0;
  for (uint32_t j = 0; j < n; ++j) {
    const uint16_t i = idx[j];
    const MegaflowIndex c = cand[j];
    if (c != kNoMegaflow) {
      const Megaflow& m = table.at(c);
      if (!m.alive.load(std::memory_order_acquire)) {
        ++stats_.dead;
      } else if (m.matches(keys[i])) {
        out[i] = c;
        ++stats_.hits;
        continue;
      } else {
        ++stats_.false_matches;
      }
    }
    idx[misses++] = i;
  }
  stats_.misses += misses;
  return misses;
}

void Smc::insert(const FlowKey& key, MegaflowIndex megaflow) {
  if (!enabled_) return;
  SmcBucket& b = buckets_[bucketOf(key.hash)];
  const uint16_t sig = signature(key.hash);
  uint32_t way = kSmcWays;
  for (uint32_t w = 0; w < kSmcWays; ++w) {
    if (b.megaflow[w] != kNoMegaflow && b.sig[w] == sig) {
      way = w;
      break;
    }
  }
  if (way == kSmcWays) {
    for (uint32_t w = 0; w < kSmcWays; ++w) {
      if (b.megaflow[w] == kNoMegaflow) {
        way = w;
        break;
      }
    }
  }
  if (way == kSmcWays) {
    way = victim_++ % kSmcWays;
    ++stats_.evictions;
  }
  b.sig[way] = sig;
  b.megaflow[way] = megaflow;
  ++stats_.inserts;
}

}  // namespace sluice::flow
