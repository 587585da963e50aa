// Admission of upcalls on a PMD: which misses go to the control thread, which
// are duplicates of one already on its way (coalesced), and which exceed the
// PMD's upcall rate (lost: not sent; the packet is still forwarded by the
// PMD's inline translation, only the megaflow that would cache it waits).
//
// Owned by one PMD thread; plain integers, no heap after construction.
//  - Coalescing: a miss is identified by the hash of its key under the mask
//    its translation produced (i.e. by the megaflow it will become), so 100k
//    source ports to one pod make one upcall. A small direct-mapped table
//    remembers recently sent ones for retry_cycles; a hash collision only
//    delays one flow's upcall by that much (its packets are still forwarded
//    by the inline translation), and a megaflow control could not install
//    (flow limit) is asked for again after it.
//  - Rate limit: token buckets in TSC cycles. One for the PMD (rate per
//    second, burst), and one per in-port with an equal share of both. A port
//    may spend the PMD's tokens freely while more than half of its burst is
//    left; below that, only with tokens of its own share. So one port sending
//    nothing but new flows (random destinations, random sources) takes at
//    most its share once the PMD is busy, and every other port keeps setting
//    up flows at least at its own share, from the half kept back.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dataplane/datapath/fixed_array.h"
#include "dataplane/datapath/limits.h"

namespace sluice {

struct UpcallGateConfig {
  uint64_t tsc_hz = 0;
  // Upcalls per second a PMD may send, and how many at once: bounds the
  // control thread's translation work per PMD (OVS's handler threads see
  // similar budgets); a new flow costs one upcall, not one per packet.
  uint32_t rate_per_sec = 20000;
  uint32_t burst = 1024;
  // How long a sent upcall suppresses duplicates: a few control polls (1 ms).
  uint32_t retry_ms = 20;
  // Port numbers a miss may come from (portTableSize of max-ports).
  uint16_t port_table = kDefaultPortTable;
};

class UpcallGate {
 public:
  enum class Verdict : uint8_t { kSend, kCoalesced, kLost };

  explicit UpcallGate(const UpcallGateConfig& c)
      : tsc_hz_(c.tsc_hz),
        cycles_per_token_(c.rate_per_sec == 0 ? 0 : c.tsc_hz / c.rate_per_sec),
        burst_(std::max<uint32_t>(c.burst, 1)),
        retry_cycles_(c.tsc_hz / 1000 * c.retry_ms),
        ports_(c.port_table) {
    setPortCount(1);
  }

  // The number of ports this PMD polls (at its quiescent point, when its
  // snapshot changes): each port's share is 1/n of the rate and burst.
  void setPortCount(uint32_t n) {
    port_count_ = std::max<uint32_t>(n, 1);
    port_cycles_per_token_ = cycles_per_token_ * port_count_;
    port_burst_ = std::max<uint32_t>(burst_ / port_count_, 1);
    pmd_.tokens = std::min(pmd_.tokens, burst_);
    for (Bucket& b : ports_) b.tokens = std::min(b.tokens, port_burst_);
  }

  // A new rate and burst (at the PMD's quiescent point, when control changed
  // them): tokens already earned are kept up to the new burst, and the
  // ports' shares follow.
  void setRate(uint32_t rate_per_sec, uint32_t burst) {
    cycles_per_token_ = rate_per_sec == 0 ? 0 : tsc_hz_ / rate_per_sec;
    burst_ = std::max<uint32_t>(burst, 1);
    setPortCount(port_count_);
  }

  // A miss from in_port (< the config's port_table) whose megaflow hashes to `flow_hash`,
  // at TSC `now`.
  Verdict admit(uint32_t flow_hash, uint16_t in_port, uint64_t now) {
    Recent& r = recent_[flow_hash & (kRecent - 1)];
    if (r.hash == flow_hash && r.valid && now - r.sent_tsc < retry_cycles_) return Verdict::kCoalesced;
    if (cycles_per_token_ != 0) {  // 0: no limit configured
      Bucket& port = ports_[in_port];
      refill(pmd_, now, cycles_per_token_, burst_);
      refill(port, now, port_cycles_per_token_, port_burst_);
      if (pmd_.tokens == 0) return Verdict::kLost;
      if (port.tokens == 0 && pmd_.tokens <= burst_ / 2) return Verdict::kLost;
      --pmd_.tokens;
      if (port.tokens != 0) --port.tokens;
    }
    r = {flow_hash, true, now};
    return Verdict::kSend;
  }
  // The queue refused an admitted upcall: forget it so the next miss retries.
  void unsend(uint32_t flow_hash) { recent_[flow_hash & (kRecent - 1)].valid = false; }

 private:
  static constexpr uint32_t kRecent = 256;  // flows in flight at once, per PMD
  struct Recent {
    uint32_t hash = 0;
    bool valid = false;
    uint64_t sent_tsc = 0;
  };
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
  uint64_t cycles_per_token_;
  uint32_t burst_;
  uint32_t port_count_ = 1;
  uint64_t retry_cycles_;
  uint64_t port_cycles_per_token_ = 0;
  uint32_t port_burst_ = 1;
  Bucket pmd_;
  FixedArray<Bucket> ports_;
  Recent recent_[kRecent];
};

}  // namespace sluice
