// Tuple-space search: burst lookup over ranked subtables, version building.
#include "dataplane/datapath/flow/classifier.h"

#include <algorithm>

namespace sluice::flow {

Classifier::Classifier(const ClassifierConfig& config) : config_(config) {
  subtables_.reserve(config.max_subtables);
  order_.reserve(config.max_subtables);
}

std::unique_ptr<Classifier> Classifier::clone() const {
  auto c = std::make_unique<Classifier>(config_);
  for (const auto& st : subtables_) {
    c->subtables_.push_back(std::make_unique<Subtable>(*st));
  }
  c->rules_ = rules_;
  c->orderByHits();
  return c;
}

void Classifier::orderByHits() {
  order_.resize(subtables_.size());
  for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint16_t>(i);
  std::stable_sort(order_.begin(), order_.end(), [this](uint16_t a, uint16_t b) {
    return subtables_[a]->hits() > subtables_[b]->hits();
  });
}

int Classifier::findSubtable(const FlowMask& mask) const {
  for (uint32_t i = 0; i < subtables_.size(); ++i) {
    const FlowMask& m = subtables_[i]->mask();
    if (keysEqual(m, mask)) return static_cast<int>(i);
  }
  return -1;
}

absl::Status Classifier::insert(const FlowMask& mask, const FlowKey& key, MegaflowIndex m) {
  const FlowMask clean = applyMask(mask, mask);
  int s = findSubtable(clean);
  if (s < 0) {
    if (subtables_.size() >= config_.max_subtables) {
      return absl::ResourceExhaustedError("classifier: too many distinct masks");
    }
    subtables_.push_back(std::make_unique<Subtable>(clean));
    // A new mask is searched last until ranking says otherwise.
    order_.push_back(static_cast<uint16_t>(subtables_.size() - 1));
    s = static_cast<int>(subtables_.size() - 1);
  }
  absl::Status st = subtables_[s]->insert(key, m);
  if (st.ok()) {
    ++rules_;
  } else if (subtables_[s]->size() == 0) {
    // Only a brand-new subtable can be empty after a failed insert.
    (void)remove(clean, key);
  }
  return st;
}

absl::Status Classifier::remove(const FlowMask& mask, const FlowKey& key) {
  const int s = findSubtable(applyMask(mask, mask));
  if (s < 0) return absl::NotFoundError("classifier: no subtable for this mask");
  if (subtables_[s]->size() > 0) {
    absl::Status st = subtables_[s]->remove(key);
    if (!st.ok()) return st;
    --rules_;
  }
  if (subtables_[s]->size() == 0) {
    subtables_.erase(subtables_.begin() + s);
    // Drop s from the order and renumber the slots after it.
    order_.erase(std::find(order_.begin(), order_.end(), static_cast<uint16_t>(s)));
    for (uint16_t& o : order_) {
      if (o > s) --o;
    }
  }
  return absl::OkStatus();
}

uint32_t Classifier::lookupBurst(const FlowKey* keys, uint16_t* idx, uint32_t n,
                                 MegaflowIndex* out, const MegaflowTable& table) const {
  uint32_t pending = n;
  uint32_t hashes[kMaxBurst];
  uint64_t masked[kMaxBurst][kMatchWords];  // stage 1's masked words, reused by stage 2
  for (uint32_t r = 0; r < order_.size() && pending > 0; ++r) {
    const Subtable& st = *subtables_[order_[r]];
    // Stage 1: hash every pending key under this mask, prefetch its slot.
    for (uint32_t j = 0; j < pending; ++j) {
      st.maskedWords(keys[idx[j]], masked[j]);
      hashes[j] = st.hashMasked(masked[j]);
      st.prefetch(hashes[j]);
    }
    // Stage 2: probe and compare; compact the misses in order.
    uint32_t left = 0;
    uint32_t hits = 0;
    for (uint32_t j = 0; j < pending; ++j) {
      const uint16_t i = idx[j];
      const MegaflowIndex m = st.findMasked(masked[j], hashes[j]);
      if (m != kNoMegaflow && table.isAlive(m)) {
        out[i] = m;
        ++hits;
      } else {
        idx[left++] = i;
      }
    }
    if (hits > 0) {
      st.addHits(hits);
      stats_.hits += hits;
      stats_.lookups_on_hits += static_cast<uint64_t>(hits) * (r + 1);
    }
    pending = left;
  }
  stats_.misses += pending;
  return pending;
}

void Classifier::rankSubtables() const {
  // Insertion sort, stable, by hits (most first): at most max_subtables
  // entries, usually already in order, and unlike std::stable_sort it never
  // allocates — this runs on the PMD.
  for (uint32_t i = 1; i < order_.size(); ++i) {
    const uint16_t o = order_[i];
    const uint64_t h = subtables_[o]->hits();
    uint32_t j = i;
    for (; j > 0 && subtables_[order_[j - 1]]->hits() < h; --j) order_[j] = order_[j - 1];
    order_[j] = o;
  }
  for (const auto& st : subtables_) st->resetHits();
}

std::vector<FlowMask> Classifier::searchOrder() const {
  std::vector<FlowMask> masks;
  masks.reserve(order_.size());
  for (uint16_t o : order_) masks.push_back(subtables_[o]->mask());
  return masks;
}

}  // namespace sluice::flow
