// Probe / hold state machine of the tier policy.
#include "dataplane/datapath/flow/tier_policy.h"

namespace sluice::flow {

TierPolicy::TierPolicy(const TierPolicyConfig& config, uint8_t allowed)
    : config_(config), mode_(allowed), choice_(allowed) {
  allowed &= kTierEmc | kTierSmc;
  mode_ = allowed;
  choice_ = allowed;
  // Every subset of the allowed tiers, the full set first.
  for (int m = 3; m >= 0; --m) {
    const auto mode = static_cast<uint8_t>(m);
    if ((mode & ~allowed) == 0) candidates_[n_candidates_++] = mode;
  }
  if (config_.enabled && n_candidates_ > 1 && config_.probe_bursts > 0) startProbe();
}

void TierPolicy::startProbe() {
  probing_ = true;
  candidate_ = 0;
  mode_ = candidates_[0];
  bursts_left_ = config_.probe_bursts;
  window_bursts_ = (config_.probe_bursts + kSubWindows - 1) / kSubWindows;
  window_left_ = window_bursts_;
  cycles_ = 0;
  packets_ = 0;
  n_windows_ = 0;
}

void TierPolicy::endSubWindow() {
  if (packets_ > 0 && n_windows_ < kSubWindows) {
    window_cost_[n_windows_++] = (cycles_ << 8) / packets_;
  }
  cycles_ = 0;
  packets_ = 0;
  window_left_ = window_bursts_;
}

void TierPolicy::endCandidate() {
  // Lower median of the sub-window costs (insertion sort of at most four).
  for (uint32_t i = 1; i < n_windows_; ++i) {
    const uint64_t v = window_cost_[i];
    uint32_t j = i;
    for (; j > 0 && window_cost_[j - 1] > v; --j) window_cost_[j] = window_cost_[j - 1];
    window_cost_[j] = v;
  }
  cost_[candidate_] = n_windows_ == 0 ? 0 : window_cost_[(n_windows_ - 1) / 2];
  n_windows_ = 0;
  ++candidate_;
  if (candidate_ < n_candidates_) {
    mode_ = candidates_[candidate_];
    bursts_left_ = config_.probe_bursts;
    window_left_ = window_bursts_;
    return;
  }
  decide();
}

void TierPolicy::decide() {
  probing_ = false;
  ++probe_rounds_;
  uint32_t best = n_candidates_;
  uint32_t current = n_candidates_;
  for (uint32_t c = 0; c < n_candidates_; ++c) {
    if (cost_[c] == 0) continue;  // not measured (no packets)
    if (best == n_candidates_ || cost_[c] < cost_[best]) best = c;
    if (candidates_[c] == choice_) current = c;
  }
  if (best != n_candidates_) {
    // Hysteresis: keep the current choice unless best is clearly cheaper.
    const bool clearly = current == n_candidates_ ||
                         cost_[best] * 100 < cost_[current] * (100 - config_.min_gain_pct);
    if (clearly) choice_ = candidates_[best];
  }
  mode_ = choice_;
  bursts_left_ = config_.hold_bursts;
}

void TierPolicy::record(uint64_t cycles, uint32_t packets) {
  if (!config_.enabled || n_candidates_ <= 1 || config_.probe_bursts == 0) return;
  if (probing_) {
    cycles_ += cycles;
    packets_ += packets;
    if (--window_left_ == 0) endSubWindow();
  }
  if (bursts_left_ > 0) --bursts_left_;
  if (bursts_left_ > 0) return;
  if (probing_) {
    if (window_left_ != window_bursts_) endSubWindow();  // a partial last window
    endCandidate();
  } else {
    startProbe();
  }
}

}  // namespace sluice::flow
