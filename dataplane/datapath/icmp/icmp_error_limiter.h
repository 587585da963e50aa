// How many ICMP/ICMPv6 errors one PMD may send: a token bucket in TSC
// cycles, as Linux limits its own (icmp_msgs_per_sec with
// icmp_msgs_burst, and icmpv6's ratelimit), so that a flood of expiring
// packets costs the node at most `icmp-error-rate` errors per second per
// PMD, and cannot turn the node into an amplifier towards a forged source.
// The bucket holds a twentieth of a second's errors (at least one): 50 at
// the default rate of 1000, Linux's icmp_msgs_burst. Rate 0: none are sent.
//
// Under the PMD's bucket each in-port (the port the error goes back out
// of) has a share: 1/n of the rate and of the burst for the n rx queues the
// PMD polls, as the upcall gate shares its budget (upcall_gate.h). A port
// may spend the PMD's tokens freely while more than half of its burst is
// left; below that, only with tokens of its own share. So one pod that
// sends nothing but expiring or oversized packets takes at most its share
// once the PMD is busy, and the path-MTU errors every other pod's TCP
// depends on still come, from the half kept back (Linux adds a limit per
// destination on top of its global one for the same reason). With one
// port polled, its share is the whole bucket.
//
// Owned by one PMD thread (plain integers, sized at construction); the
// clock is the caller's TSC value, so tests drive it by hand.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dataplane/datapath/fixed_array.h"
#include "dataplane/datapath/limits.h"

namespace sluice {

struct IcmpErrorLimiterConfig {
  uint64_t tsc_hz = 0;           // 0: the PMD's upcall gate's (the real TSC rate)
  uint32_t rate_per_sec = 1000;  // icmp-error-rate
  // Port numbers an error may go back out of (portTableSize of max-ports).
  uint16_t port_table = kDefaultPortTable;
};

class IcmpErrorLimiter {
 public:
  explicit IcmpErrorLimiter(const IcmpErrorLimiterConfig& c) : tsc_hz_(c.tsc_hz), ports_(c.port_table) {
    setRate(c.rate_per_sec);
  }

  static uint32_t burstFor(uint32_t rate_per_sec) { return std::max<uint32_t>(rate_per_sec / 20, 1); }

  // A new rate (at the PMD's quiescent point): tokens already earned are
  // kept up to the new burst, and the ports' shares follow.
  void setRate(uint32_t rate_per_sec) {
    rate_ = rate_per_sec;
    cycles_per_token_ = rate_per_sec == 0 ? 0 : std::max<uint64_t>(tsc_hz_ / rate_per_sec, 1);
    burst_ = burstFor(rate_per_sec);
    setPortCount(port_count_);
  }
  uint32_t rate() const { return rate_; }

  // The number of rx queues the PMD polls (at its quiescent point, when its
  // snapshot changes): each port's share is 1/n of the rate and burst.
  void setPortCount(uint32_t n) {
    port_count_ = std::max<uint32_t>(n, 1);
    port_cycles_per_token_ = cycles_per_token_ * port_count_;
    port_burst_ = std::max<uint32_t>(burst_ / port_count_, 1);
    pmd_.tokens = std::min(pmd_.tokens, burst_);
    for (Bucket& b : ports_) b.tokens = std::min(b.tokens, port_burst_);
  }

  // One error back out of in_port (< the config's port_table) at TSC
  // `now`: true if it may be sent (a token is spent).
  bool admit(uint16_t in_port, uint64_t now) {
    if (cycles_per_token_ == 0) return false;
    Bucket& port = ports_[in_port];
    refill(pmd_, now, cycles_per_token_, burst_);
    refill(port, now, port_cycles_per_token_, port_burst_);
    if (pmd_.tokens == 0) return false;
    if (port.tokens == 0 && pmd_.tokens <= burst_ / 2) return false;
    --pmd_.tokens;
    if (port.tokens != 0) --port.tokens;
    return true;
  }

 private:
  struct Bucket {
    uint32_t tokens = 0;
    bool started = false;
    uint64_t last_refill = 0;
  };

  static void refill(Bucket& b, uint64_t now, uint64_t cycles_per_token, uint32_t burst) {
    if (!b.started) {  // a bucket starts full
      b.started = true;
      b.last_refill = now;
      b.tokens = burst;
      return;
    }
    const uint64_t add = (now - b.last_refill) / cycles_per_token;
    if (add == 0) return;
    b.last_refill += add * cycles_per_token;
    b.tokens = add >= burst - std::min(b.tokens, burst) ? burst : b.tokens + static_cast<uint32_t>(add);
  }

  uint64_t tsc_hz_;
  uint32_t rate_ = 0;
  uint64_t cycles_per_token_ = 0;
  uint32_t burst_ = 1;
  uint32_t port_count_ = 1;
  uint64_t port_cycles_per_token_ = 0;
  uint32_t port_burst_ = 1;
  Bucket pmd_;
  FixedArray<Bucket> ports_;
};

}  // namespace sluice
