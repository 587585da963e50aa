// The mark -> megaflow array of partial offload: a NIC rule tags the packets
// of one megaflow with MARK(id), and `id` is a dense index into this array,
// so the PMD finds the megaflow with one load instead of parsing the packet
// and searching the caches.
//
// Threads. The offload thread (control) is the only writer; PMDs read.
//   - Before a rule with mark `id` is created, the offload thread stores the
//     entry (release). A packet can carry `id` only once the rule exists, so
//     the PMD's acquire load sees the entry.
//   - When the megaflow goes away the offload thread clears the entry first
//     (release), then destroys the rule; a packet still marked `id` then
//     finds no entry and takes the normal pipeline (counted as a mark miss).
//     The mark is reused only after the rule is gone and every PMD has passed
//     a quiescent point (see offload_manager.h), so a late packet with an old
//     mark can never name a newer megaflow.
//   - Independently of that, the PMD re-checks the megaflow: alive, and of
//     the generation the entry recorded (megaflow.h's kill protocol), so a
//     megaflow killed by revalidation is never used through its mark even
//     while its rule and entry still exist.
// One entry is a single 64-bit atomic, so readers never see a torn pair.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "dataplane/datapath/flow/megaflow.h"

namespace sluice::offload {

// What a mark names: a megaflow of one PMD's table, at one generation.
struct MarkTarget {
  uint32_t pmd = 0;                    // index of the PMD whose table holds it
  flow::MegaflowIndex megaflow = 0;    // index in that table
  uint32_t generation = 0;             // Megaflow::generation when offloaded
};

class MarkTable {
 public:
  // Megaflow indexes must fit 24 bits and PMD indexes 7 (one word per entry).
  static constexpr uint32_t kMaxMegaflowIndex = (1u << 24) - 1;
  static constexpr uint32_t kMaxPmd = 127;

  explicit MarkTable(uint32_t capacity)
      : capacity_(capacity), entries_(std::make_unique<std::atomic<uint64_t>[]>(capacity)) {
    for (uint32_t i = 0; i < capacity; ++i) entries_[i].store(0, std::memory_order_relaxed);
  }
  MarkTable(const MarkTable&) = delete;
  MarkTable& operator=(const MarkTable&) = delete;

  uint32_t capacity() const { return capacity_; }

  // The Sluice port number whose packets may carry marks (kNoPort: none).
  // Written by control when the offload port attaches or goes; the PMD
  // ignores marks on every other port.
  static constexpr uint32_t kNoPort = 0xffffffffU;
  uint32_t port() const { return port_.load(std::memory_order_relaxed); }
  void setPort(uint32_t port_no) { port_.store(port_no, std::memory_order_relaxed); }

  // --- PMD side -----------------------------------------------------------
  // The target of `mark`, or false for an unknown/cleared/out-of-range mark.
  bool lookup(uint32_t mark, MarkTarget* out) const {
    if (mark >= capacity_) return false;
    const uint64_t e = entries_[mark].load(std::memory_order_acquire);
    if ((e & kValid) == 0) return false;
    out->megaflow = static_cast<uint32_t>(e & kMaxMegaflowIndex);
    out->pmd = static_cast<uint32_t>((e >> 24) & kMaxPmd);
    out->generation = static_cast<uint32_t>(e >> 32);
    return true;
  }

  // --- offload thread -----------------------------------------------------
  void set(uint32_t mark, const MarkTarget& t) {
    const uint64_t e = kValid | (static_cast<uint64_t>(t.generation) << 32) |
                       (static_cast<uint64_t>(t.pmd & kMaxPmd) << 24) | (t.megaflow & kMaxMegaflowIndex);
    entries_[mark].store(e, std::memory_order_release);
  }
  void clear(uint32_t mark) { entries_[mark].store(0, std::memory_order_release); }

 private:
  static constexpr uint64_t kValid = 1ULL << 31;
  uint32_t capacity_;
  std::atomic<uint32_t> port_{kNoPort};
  std::unique_ptr<std::atomic<uint64_t>[]> entries_;
};

}  // namespace sluice::offload
