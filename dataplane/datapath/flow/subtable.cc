// Subtable: masked-key hash table with linear probing.
#include "dataplane/datapath/flow/subtable.h"

#include <cstring>

namespace sluice::flow {
namespace {

// Slot header: megaflow in the low half, hash in the high half; an empty
// slot has kNoMegaflow in the low half.
inline MegaflowIndex slotFlow(uint64_t header) { return static_cast<MegaflowIndex>(header); }
inline uint32_t slotHash(uint64_t header) { return static_cast<uint32_t>(header >> 32); }
inline uint64_t makeHeader(uint32_t hash, MegaflowIndex m) {
  return (static_cast<uint64_t>(hash) << 32) | m;
}

}  // namespace

Subtable::Subtable(const FlowMask& mask) : mask_(applyMask(mask, mask)) {
  for (uint32_t i = 0; i < kMatchWords; ++i) {
    const uint64_t m = mask_.words()[i];
    if (m != 0) {
      word_idx_[n_words_] = static_cast<uint8_t>(i);
      mask_words_[n_words_] = m;
      ++n_words_;
    }
  }
  stride_ = 2;
  while (stride_ < 1 + n_words_) stride_ *= 2;
  cap_mask_ = kInitialCapacity - 1;
  slots_.assign(static_cast<size_t>(kInitialCapacity) * stride_, 0);
  for (uint32_t s = 0; s < kInitialCapacity; ++s) slots_[s * stride_] = makeHeader(0, kNoMegaflow);
}

Subtable::Subtable(const Subtable& other)
    : mask_(other.mask_), n_words_(other.n_words_), stride_(other.stride_),
      cap_mask_(other.cap_mask_), size_(other.size_), slots_(other.slots_),
      hits_(other.hits_.load(std::memory_order_relaxed)) {
  std::memcpy(word_idx_, other.word_idx_, sizeof(word_idx_));
  std::memcpy(mask_words_, other.mask_words_, sizeof(mask_words_));
}

MegaflowIndex Subtable::findMasked(const uint64_t* w, uint32_t hash) const {
  uint32_t s = hash & cap_mask_;
  for (;;) {
    const uint64_t* slot = &slots_[s * stride_];
    const uint64_t header = slot[0];
    const MegaflowIndex m = slotFlow(header);
    if (m == kNoMegaflow) return kNoMegaflow;
    if (slotHash(header) == hash) {
      uint64_t diff = 0;
      for (uint32_t i = 0; i < n_words_; ++i) diff |= slot[1 + i] ^ w[i];
      if (diff == 0) return m;
    }
    s = (s + 1) & cap_mask_;
  }
}

uint32_t Subtable::probe(const uint64_t* w, uint32_t h) const {
  uint32_t s = h & cap_mask_;
  for (;;) {
    const uint64_t* slot = &slots_[s * stride_];
    if (slotFlow(slot[0]) == kNoMegaflow) return s;
    if (slotHash(slot[0]) == h && std::memcmp(slot + 1, w, n_words_ * 8) == 0) return s;
    s = (s + 1) & cap_mask_;
  }
}

void Subtable::grow() {
  std::vector<uint64_t, CacheAlignedAllocator<uint64_t>> old;
  old.swap(slots_);
  const uint32_t old_cap = cap_mask_ + 1;
  const uint32_t cap = old_cap * 2;
  cap_mask_ = cap - 1;
  slots_.assign(static_cast<size_t>(cap) * stride_, 0);
  for (uint32_t s = 0; s < cap; ++s) slots_[s * stride_] = makeHeader(0, kNoMegaflow);
  for (uint32_t s = 0; s < old_cap; ++s) {
    const uint64_t* src = &old[s * stride_];
    if (slotFlow(src[0]) == kNoMegaflow) continue;
    const uint32_t d = probe(src + 1, slotHash(src[0]));
    std::memcpy(&slots_[d * stride_], src, stride_ * 8);
  }
}

absl::Status Subtable::insert(const FlowKey& key, MegaflowIndex megaflow) {
  if (megaflow == kNoMegaflow) return absl::InvalidArgumentError("invalid megaflow index");
  // Load factor at most 1/2: hits need ~1.5 probes, misses ~2.5 (Knuth).
  if ((size_ + 1) * 2 > cap_mask_ + 1) grow();
  uint64_t w[kMatchWords];
  maskedWords(key, w);
  const uint32_t h = hashWords(w, n_words_, 0);
  const uint32_t s = probe(w, h);
  uint64_t* slot = &slots_[s * stride_];
  if (slotFlow(slot[0]) != kNoMegaflow) {
    return absl::AlreadyExistsError("a megaflow with this mask and masked key exists");
  }
  std::memcpy(slot + 1, w, n_words_ * 8);
  slot[0] = makeHeader(h, megaflow);
  ++size_;
  return absl::OkStatus();
}

absl::Status Subtable::remove(const FlowKey& key) {
  uint64_t w[kMatchWords];
  maskedWords(key, w);
  const uint32_t h = hashWords(w, n_words_, 0);
  uint32_t hole = probe(w, h);
  if (slotFlow(slots_[hole * stride_]) == kNoMegaflow) {
    return absl::NotFoundError("no megaflow with this mask and masked key");
  }
  // Backward shift: pull later members of the chain into the hole when their
  // home slot is not cyclically inside (hole, j].
  uint32_t j = hole;
  for (;;) {
    j = (j + 1) & cap_mask_;
    const uint64_t* sj = &slots_[j * stride_];
    if (slotFlow(sj[0]) == kNoMegaflow) break;
    const uint32_t home = slotHash(sj[0]) & cap_mask_;
    const bool home_in_range =
        hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (home_in_range) continue;
    std::memcpy(&slots_[hole * stride_], sj, stride_ * 8);
    hole = j;
  }
  slots_[hole * stride_] = makeHeader(0, kNoMegaflow);
  --size_;
  return absl::OkStatus();
}

}  // namespace sluice::flow
