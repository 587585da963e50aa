// How many ICMP/ICMPv6 errors one PMD may send: a token bucket in TSC
// cycles, as Linux limits its own (icmp_msgs_per_sec with
// icmp_msgs_burst, and icmpv6's ratelimit), so that a flood of expiring
// packets costs the node at most `icmp-error-rate` errors per second per
// PMD, and cannot turn the node into an amplifier towards a forged source.
// The bucket holds a twentieth of a second's errors (at least one): 50 at
// the default rate of 1000, Linux's icmp_msgs_burst. Rate 0: none are sent.
//
// Owned by one PMD thread (plain integers); the clock is the caller's TSC
// value, so tests drive it by hand.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sluice {

struct IcmpErrorLimiterConfig {
  uint64_t tsc_hz = 0;           // 0: the PMD's upcall gate's (the real TSC rate)
  uint32_t rate_per_sec = 1000;  // icmp-error-rate
};

class IcmpErrorLimiter {
 public:
  explicit IcmpErrorLimiter(const IcmpErrorLimiterConfig& c) : tsc_hz_(c.tsc_hz) { setRate(c.rate_per_sec); }

  static uint32_t burstFor(uint32_t rate_per_sec) { return std::max<uint32_t>(rate_per_sec / 20, 1); }

  // A new rate (at the PMD's quiescent point): tokens already earned are
  // kept up to the new burst.
  void setRate(uint32_t rate_per_sec) {
    rate_ = rate_per_sec;
    cycles_per_token_ = rate_per_sec == 0 ? 0 : std::max<uint64_t>(tsc_hz_ / rate_per_sec, 1);
    burst_ = burstFor(rate_per_sec);
    tokens_ = std::min(tokens_, burst_);
  }
  uint32_t rate() const { return rate_; }

  // One error at TSC `now`: true if it may be sent (a token is spent).
  bool admit(uint64_t now) {
    if (cycles_per_token_ == 0) return false;
    if (!started_) {  // the bucket starts full
      started_ = true;
      last_refill_ = now;
      tokens_ = burst_;
    } else if (const uint64_t add = (now - last_refill_) / cycles_per_token_; add != 0) {
      last_refill_ += add * cycles_per_token_;
      tokens_ = add >= burst_ - tokens_ ? burst_ : tokens_ + static_cast<uint32_t>(add);
    }
    if (tokens_ == 0) return false;
    --tokens_;
    return true;
  }

 private:
  uint64_t tsc_hz_;
  uint32_t rate_ = 0;
  uint64_t cycles_per_token_ = 0;
  uint32_t burst_ = 1;
  uint32_t tokens_ = 0;
  bool started_ = false;
  uint64_t last_refill_ = 0;
};

}  // namespace sluice
