// Exact-match cache: staged burst lookup (hash → prefetch both slots →
// compare), lazy invalidation, probabilistic insertion.
#include "dataplane/datapath/flow/emc.h"

#include <smmintrin.h>

#include <bit>
#include <cstring>
#include <limits>

#include "absl/status/status.h"

namespace sluice::flow {

absl::StatusOr<std::unique_ptr<Emc>> Emc::create(const EmcConfig& config) {
  if (config.entries < 2 || !std::has_single_bit(config.entries)) {
    return absl::InvalidArgumentError("EMC entries must be a power of two >= 2");
  }
  const uint32_t shift = 32 - static_cast<uint32_t>(std::countr_zero(config.entries));
  return std::unique_ptr<Emc>(new Emc(config, shift));
}

Emc::Emc(const EmcConfig& config, uint32_t shift)
    : table_(config.entries), mask_(config.entries - 1), shift_(shift), inv_prob_(0),
      insert_threshold_(0), prng_(config.seed) {
  clear();
  setInsertInvProb(config.insert_inv_prob);
}

void Emc::setInsertInvProb(uint32_t inv_prob) {
  inv_prob_ = inv_prob;
  // A uniform 32-bit draw is <= UINT32_MAX / N with probability ~1/N; N = 1
  // gives UINT32_MAX, i.e. always (OVS computes its threshold the same way).
  insert_threshold_ = inv_prob == 0 ? 0 : std::numeric_limits<uint32_t>::max() / inv_prob;
}

void Emc::clear() {
  for (EmcEntry& e : table_) {
    std::memset(&e, 0, sizeof(e));
    e.megaflow = kNoMegaflow;
  }
}

uint32_t Emc::occupancy() const {
  uint32_t n = 0;
  for (const EmcEntry& e : table_) n += e.megaflow != kNoMegaflow;
  return n;
}

// Inline: four call sites, one of them per packet of an EMC hit (perf at
// 1k flows showed the out-of-line call as ~5 cycles/packet).
[[gnu::always_inline]] inline bool Emc::sameKey(const EmcEntry& e, const FlowKey& k) {
  // Seven 16-byte compares, unrolled: this runs once per packet on an EMC
  // hit, and the loop the compiler makes of the word-by-word form spends
  // half its time on loop control (bench/flow BM_EmcLookup/flows:1).
  static_assert(kMatchWords == 14 && alignof(EmcEntry) >= 16 && alignof(FlowKey) >= 16);
  const auto* a = reinterpret_cast<const __m128i*>(e.words);
  const auto* b = reinterpret_cast<const __m128i*>(k.words());
  __m128i diff = _mm_xor_si128(_mm_load_si128(a), _mm_load_si128(b));
  diff = _mm_or_si128(diff, _mm_xor_si128(_mm_load_si128(a + 1), _mm_load_si128(b + 1)));
  diff = _mm_or_si128(diff, _mm_xor_si128(_mm_load_si128(a + 2), _mm_load_si128(b + 2)));
  diff = _mm_or_si128(diff, _mm_xor_si128(_mm_load_si128(a + 3), _mm_load_si128(b + 3)));
  diff = _mm_or_si128(diff, _mm_xor_si128(_mm_load_si128(a + 4), _mm_load_si128(b + 4)));
  diff = _mm_or_si128(diff, _mm_xor_si128(_mm_load_si128(a + 5), _mm_load_si128(b + 5)));
  diff = _mm_or_si128(diff, _mm_xor_si128(_mm_load_si128(a + 6), _mm_load_si128(b + 6)));
  return _mm_testz_si128(diff, diff) != 0;
}

uint32_t Emc::lookupBurst(const FlowKey* keys, uint16_t* idx, uint32_t n, MegaflowIndex* out,
                          const MegaflowTable& table) {
  if (inv_prob_ == 0) return n;
  // Stage 1: both candidate slots of every key into cache: both lines of
  // the first (the compare of a hit reads the whole entry; insert fills the
  // first slot first, so most hits are there), the second's first line
  // (its hash tells whether the rest is needed). A burst's 4 lines per key
  // kept the fill buffers full: perf blamed the prefetches themselves.
  for (uint32_t j = 0; j < n; ++j) {
    const uint32_t h = keys[idx[j]].hash;
    const auto* e0 = reinterpret_cast<const char*>(&table_[slot0(h)]);
    __builtin_prefetch(e0);
    __builtin_prefetch(e0 + 64);
    __builtin_prefetch(&table_[slot1(h)]);
  }
  // Stage 2: compare; start loading the megaflow of every hit.
  EmcEntry* hits[kMaxBurst];
  for (uint32_t j = 0; j < n; ++j) {
    const FlowKey& k = keys[idx[j]];
    EmcEntry* hit = nullptr;
    EmcEntry* e0 = &table_[slot0(k.hash)];
    EmcEntry* e1 = &table_[slot1(k.hash)];
    if (e0->hash == k.hash && e0->megaflow != kNoMegaflow && sameKey(*e0, k)) {
      hit = e0;
    } else if (e1->hash == k.hash && e1->megaflow != kNoMegaflow && sameKey(*e1, k)) {
      hit = e1;
    }
    if (hit != nullptr) __builtin_prefetch(&table.at(hit->megaflow));
    hits[j] = hit;
  }
  // Stage 3: check each hit's megaflow is still the one cached, compact misses.
  uint32_t misses = 0;
  for (uint32_t j = 0; j < n; ++j) {
    const uint16_t i = idx[j];
    EmcEntry* hit = hits[j];
    // An earlier packet of this burst may have found the same entry's
    // megaflow dead and emptied the entry (one flow: every packet hits it).
    if (hit != nullptr && hit->megaflow != kNoMegaflow) {
      const Megaflow& m = table.at(hit->megaflow);
      if (m.alive.load(std::memory_order_acquire) &&
          m.generation.load(std::memory_order_acquire) == hit->generation) {
        out[i] = hit->megaflow;
        ++stats_.hits;
        continue;
      }
      hit->megaflow = kNoMegaflow;  // lazy invalidation
      ++stats_.dead;
    }
    idx[misses++] = i;
  }
  stats_.misses += misses;
  return misses;
}

bool Emc::insert(const FlowKey& key, MegaflowIndex megaflow, uint32_t generation) {
  if (inv_prob_ == 0) return false;
  if (inv_prob_ != 1 && prng_.next() > insert_threshold_) {
    ++stats_.insert_skips;
    return false;
  }
  EmcEntry* e0 = &table_[slot0(key.hash)];
  EmcEntry* e1 = &table_[slot1(key.hash)];
  EmcEntry* target;
  if (e0->megaflow != kNoMegaflow && e0->hash == key.hash && sameKey(*e0, key)) {
    target = e0;  // same key: refresh in place
  } else if (e1->megaflow != kNoMegaflow && e1->hash == key.hash && sameKey(*e1, key)) {
    target = e1;
  } else if (e0->megaflow == kNoMegaflow) {
    target = e0;
  } else if (e1->megaflow == kNoMegaflow) {
    target = e1;
  } else {
    // Both ways taken by other keys: a random victim, so two keys fighting
    // for one slot pair do not always evict the same one.
    target = (prng_.next() & 1) != 0 ? e1 : e0;
    ++stats_.evictions;
  }
  std::memcpy(target->words, &key, sizeof(target->words));
  target->hash = key.hash;
  target->megaflow = megaflow;
  target->generation = generation;
  ++stats_.inserts;
  return true;
}

}  // namespace sluice::flow
