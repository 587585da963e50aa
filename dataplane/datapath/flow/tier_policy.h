// Chooses which cache tiers a PMD's lookup uses, from what they cost here.
//
// Why: a cache tier pays for itself only when its hits are cheaper than the
// tier below and its misses cost little. Measured on this project's
// benchmarks (bench/flow), with 100 destination megaflows the classifier alone
// resolves 100k round-robin flows in about 40 cycles/packet while EMC+SMC in
// front of it cost about 100 (the EMC mostly misses; the 8 MB SMC misses the
// CPU cache); with one flow the EMC is the cheapest tier. Hit rates alone
// cannot tell these apart (the SMC hits 100% in the slow case), cycles can.
//
// How: the PMD times every lookup burst (TSC). The policy runs each allowed
// mode (EMC on/off x SMC on/off; the classifier is always on) for
// probe_bursts bursts, keeps the one with the fewest cycles per packet for
// hold_bursts bursts, then probes again, so it follows the traffic.
// Each mode's probe is split into four sub-windows and scored by the lower
// median of their cycles per packet, so one burst inflated by an interrupt
// or a preemption (frequent on a shared core) does not decide; and the policy
// leaves its current choice only for a mode at least min_gain_pct cheaper,
// so near-equal modes do not flap.
// A tier whose lookups are off stops being refilled (SMC) or is refilled only
// at its insertion probability (EMC), so its probe starts colder than its
// steady state: the policy errs towards fewer tiers, never towards a wrong
// answer (tiers only change speed).
//
// Owned by one PMD thread; plain integers, no atomics.
#pragma once

#include <cstdint>

namespace sluice::flow {

// Bits of a mode.
inline constexpr uint8_t kTierEmc = 1;
inline constexpr uint8_t kTierSmc = 2;

struct TierPolicyConfig {
  bool enabled = true;           // false: always use every allowed tier
  uint32_t probe_bursts = 64;    // bursts measured per mode
  uint32_t hold_bursts = 16384;  // bursts the winner runs before a new probe (~0.5M packets)
  uint32_t min_gain_pct = 5;     // hysteresis: switch only for this much less cost
};

class TierPolicy {
 public:
  // allowed: the tiers that exist (e.g. no kTierEmc when the EMC is off).
  TierPolicy(const TierPolicyConfig& config, uint8_t allowed);

  // The mode (kTier* bits) for the next burst.
  uint8_t mode() const { return mode_; }
  // Whether record() uses the cycles of the next burst: only while probing.
  // The caller reads the TSC only then (two reads per burst cost as much as
  // a few packets' lookups on a virtualised TSC).
  bool measuring() const { return probing_; }
  // Feeds back the burst just run in mode(): its lookup cycles and packets.
  void record(uint64_t cycles, uint32_t packets);

  // Counters for stats: probe rounds finished and the last winner.
  uint64_t probeRounds() const { return probe_rounds_; }
  uint8_t lastChoice() const { return choice_; }

 private:
  static constexpr uint32_t kSubWindows = 4;

  void startProbe();
  void endSubWindow();
  void endCandidate();
  void decide();

  TierPolicyConfig config_;
  uint8_t candidates_[4];  // allowed modes, richest first
  uint32_t n_candidates_ = 0;
  uint32_t candidate_ = 0;  // index being probed
  bool probing_ = false;
  uint8_t mode_;
  uint8_t choice_;
  uint32_t bursts_left_ = 0;      // in the probe of this candidate, or in the hold
  uint32_t window_bursts_ = 1;    // bursts per sub-window
  uint32_t window_left_ = 0;      // bursts left in the current sub-window
  uint64_t cycles_ = 0;           // of the current sub-window
  uint64_t packets_ = 0;
  uint64_t window_cost_[kSubWindows] = {};  // cycles per packet x 256, per sub-window
  uint32_t n_windows_ = 0;
  uint64_t cost_[4] = {};         // score per candidate (0 = not measured)
  uint64_t probe_rounds_ = 0;
};

}  // namespace sluice::flow
