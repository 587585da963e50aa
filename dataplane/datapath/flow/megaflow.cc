// MegaflowTable's control-side operations (install, kill, recycle).
#include "dataplane/datapath/flow/megaflow.h"

#include "absl/status/status.h"

namespace sluice::flow {

MegaflowTable::MegaflowTable(uint32_t capacity)
    : capacity_(capacity), records_(std::make_unique<Megaflow[]>(capacity)) {
  free_.reserve(capacity);
  // Hand out low indices first so a small table stays in few cache lines.
  for (uint32_t i = capacity; i > 0; --i) {
    free_.push_back(i - 1);
  }
}

absl::StatusOr<MegaflowIndex> MegaflowTable::install(const FlowKey& key, const FlowMask& mask,
                                                     const MegaflowActions& actions,
                                                     uint64_t now_tsc) {
  if (free_.empty()) {
    return absl::ResourceExhaustedError("megaflow table full (flow limit reached)");
  }
  const MegaflowIndex i = free_.back();
  free_.pop_back();
  Megaflow& m = records_[i];
  // applyMask(mask, mask) is the mask with its (meaningless) metadata zeroed.
  m.mask = applyMask(mask, mask);
  m.key = applyMask(key, mask);
  uint32_t n = 0;
  for (uint32_t w = 0; w < kMatchWords; ++w) {
    if (m.mask.words()[w] == 0) continue;
    if (n < kCompactWords) {
      m.compact_idx[n] = static_cast<uint8_t>(w);
      m.compact_mask[n] = m.mask.words()[w];
      m.compact_key[n] = m.key.words()[w];
    }
    ++n;
  }
  m.n_compact = static_cast<uint8_t>(n > kCompactWords ? kCompactWords + 1 : n);
  m.actions = actions;
  m.packets.store(0, std::memory_order_relaxed);
  m.bytes.store(0, std::memory_order_relaxed);
  m.last_used_tsc.store(now_tsc, std::memory_order_relaxed);
  m.installed_tsc.store(now_tsc, std::memory_order_relaxed);
  // A new life, a new generation (see the protocol in megaflow.h): published
  // by the release below together with the record.
  m.generation.store(m.generation.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  m.alive.store(true, std::memory_order_release);
  ++live_;
  return i;
}

void MegaflowTable::kill(MegaflowIndex i) {
  Megaflow& m = records_[i];
  if (!m.alive.load(std::memory_order_relaxed)) return;
  m.alive.store(false, std::memory_order_release);
  m.generation.store(m.generation.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  --live_;
}

absl::Status MegaflowTable::recycle(MegaflowIndex i) {
  if (i >= capacity_ || records_[i].alive.load(std::memory_order_relaxed)) {
    return absl::FailedPreconditionError("recycle of a megaflow that is not dead");
  }
  free_.push_back(i);
  return absl::OkStatus();
}

}  // namespace sluice::flow
