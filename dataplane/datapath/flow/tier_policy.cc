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
  best_packets_ = 0;
  mode_ = candidates_[0];
  bursts_left_ = config_.probe_bursts;
  cycles_ = 0;
  packets_ = 0;
}

void TierPolicy::nextCandidate() {
  // Cheaper per packet: cycles/packets < best_cycles/best_packets, compared
  // without division.
  if (packets_ > 0 &&
      (best_packets_ == 0 || cycles_ * best_packets_ < best_cycles_ * packets_)) {
    best_cycles_ = cycles_;
    best_packets_ = packets_;
    best_mode_ = mode_;
  }
  ++candidate_;
  cycles_ = 0;
  packets_ = 0;
  if (candidate_ < n_candidates_) {
    mode_ = candidates_[candidate_];
    bursts_left_ = config_.probe_bursts;
    return;
  }
  probing_ = false;
  ++probe_rounds_;
  if (best_packets_ > 0) choice_ = best_mode_;
  mode_ = choice_;
  bursts_left_ = config_.hold_bursts;
}

void TierPolicy::record(uint64_t cycles, uint32_t packets) {
  if (!config_.enabled || n_candidates_ <= 1 || config_.probe_bursts == 0) return;
  if (probing_) {
    cycles_ += cycles;
    packets_ += packets;
  }
  if (bursts_left_ > 0) --bursts_left_;
  if (bursts_left_ > 0) return;
  if (probing_) {
    nextCandidate();
  } else {
    startProbe();
  }
}

}  // namespace sluice::flow
