// One tuple of the megaflow classifier: every megaflow that shares one mask,
// in an open-addressing (linear probing) hash table keyed by the masked key.
//
// Only the words the mask touches are stored and hashed (a router's masks
// usually cover 2-4 of the key's 14 match words), so a slot is
// [hash:32 | megaflow:32] followed by those masked words, all in one
// contiguous array: a probe usually costs one cache line.
//
// Threads: maskedWords()/hashMasked()/prefetch()/findMasked() are the PMD's
// and only read; insert()/remove() are the control thread's and run on a
// classifier version no PMD reads yet (see classifier.h). The hit counter is written by the PMD that
// reads this version and read by the control thread when it builds the next
// version; a relaxed atomic makes that a heuristic, not a data race.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "absl/status/status.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"

namespace sluice::flow {

// Allocates on 64-byte boundaries, so that slots whose stride divides a
// cache line never straddle two lines.
template <typename T>
struct CacheAlignedAllocator {
  using value_type = T;
  CacheAlignedAllocator() = default;
  template <typename U>
  explicit CacheAlignedAllocator(const CacheAlignedAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
  bool operator==(const CacheAlignedAllocator&) const { return true; }
};

class Subtable {
 public:
  explicit Subtable(const FlowMask& mask);
  Subtable(const Subtable& other);  // control thread: deep copy for a new version
  Subtable& operator=(const Subtable&) = delete;

  const FlowMask& mask() const { return mask_; }
  uint32_t size() const { return size_; }
  uint32_t wordCount() const { return n_words_; }

  // --- PMD side -----------------------------------------------------------
  // key AND mask, compacted to the mask's words (wordCount() of them).
  void maskedWords(const FlowKey& key, uint64_t* out) const {
    const KeyWord* k = key.words();
    for (uint32_t w = 0; w < n_words_; ++w) out[w] = k[word_idx_[w]] & mask_words_[w];
  }
  // Hash of masked words from maskedWords().
  uint32_t hashMasked(const uint64_t* w) const { return hashWords(w, n_words_, 0); }
  void prefetch(uint32_t hash) const { __builtin_prefetch(&slots_[(hash & cap_mask_) * stride_]); }
  // The megaflow whose masked key equals the masked words w (from
  // maskedWords(), hash from hashMasked()), or kNoMegaflow.
  MegaflowIndex findMasked(const uint64_t* w, uint32_t hash) const;

  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  void addHits(uint64_t n) const {
    hits_.store(hits_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void resetHits() const { hits_.store(0, std::memory_order_relaxed); }

  // --- control side -------------------------------------------------------
  // AlreadyExists if the masked key is present. May grow the table (heap).
  absl::Status insert(const FlowKey& key, MegaflowIndex megaflow);
  // NotFound if absent. Backward-shift deletion keeps probe chains intact
  // without tombstones.
  absl::Status remove(const FlowKey& key);

 private:
  static constexpr uint32_t kInitialCapacity = 16;

  // Slot whose masked words equal w (with hash h), or the empty slot ending
  // its probe chain.
  uint32_t probe(const uint64_t* w, uint32_t h) const;
  void grow();

  FlowMask mask_;
  uint8_t word_idx_[kMatchWords];   // key words the mask touches, ascending
  uint64_t mask_words_[kMatchWords];  // the mask's value for each of them
  uint32_t n_words_ = 0;
  // Words per slot: header + n_words_, rounded up to 2, 4, 8 or 16 so a slot
  // sits inside one cache line (two for masks over more than 7 words).
  // Measured (bench/flow BM_ClassifierLookup, 3-word mask, medians of 3):
  // 100k flows 114 -> 69 cycles/packet, 10k flows 45 -> 38, against the
  // unpadded stride on an unaligned vector.
  uint32_t stride_ = 2;
  uint32_t cap_mask_ = 0;
  uint32_t size_ = 0;
  std::vector<uint64_t, CacheAlignedAllocator<uint64_t>> slots_;
  mutable std::atomic<uint64_t> hits_{0};  // hits since the last ranking
};

}  // namespace sluice::flow
