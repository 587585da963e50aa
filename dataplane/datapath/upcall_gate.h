// Admission of upcalls on a PMD: which misses go to the control thread, which
// are duplicates of one already on its way (coalesced), and which exceed the
// PMD's upcall rate (lost: counted and dropped, never queued forever).
//
// Owned by one PMD thread; plain integers, no heap after construction.
//  - Coalescing: a miss is identified by the hash of its key under the mask
//    its translation produced (i.e. by the megaflow it will become), so 100k
//    source ports to one pod make one upcall. A small direct-mapped table
//    remembers recently sent ones for retry_cycles; a hash collision only
//    delays one flow's upcall by that much (its packets are still forwarded
//    by the inline translation), and a megaflow control could not install
//    (flow limit) is asked for again after it.
//  - Rate limit: a token bucket in TSC cycles (rate per second, burst).
#pragma once

#include <cstdint>

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
};

class UpcallGate {
 public:
  enum class Verdict : uint8_t { kSend, kCoalesced, kLost };

  explicit UpcallGate(const UpcallGateConfig& c)
      : cycles_per_token_(c.rate_per_sec == 0 ? 0 : c.tsc_hz / c.rate_per_sec),
        burst_(c.burst),
        retry_cycles_(c.tsc_hz / 1000 * c.retry_ms),
        tokens_(c.burst) {}

  // A miss whose megaflow hashes to `flow_hash`, at TSC `now`.
  Verdict admit(uint32_t flow_hash, uint64_t now) {
    Recent& r = recent_[flow_hash & (kRecent - 1)];
    if (r.hash == flow_hash && r.valid && now - r.sent_tsc < retry_cycles_) return Verdict::kCoalesced;
    refill(now);
    if (tokens_ == 0) return Verdict::kLost;
    --tokens_;
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

  void refill(uint64_t now) {
    if (cycles_per_token_ == 0) {  // no limit configured
      tokens_ = burst_ == 0 ? 1 : burst_;
      return;
    }
    if (last_refill_ == 0) last_refill_ = now;
    const uint64_t add = (now - last_refill_) / cycles_per_token_;
    if (add == 0) return;
    last_refill_ += add * cycles_per_token_;
    tokens_ = add >= burst_ - tokens_ ? burst_ : tokens_ + static_cast<uint32_t>(add);
  }

  uint64_t cycles_per_token_;
  uint32_t burst_;
  uint64_t retry_cycles_;
  uint32_t tokens_;
  uint64_t last_refill_ = 0;
  Recent recent_[kRecent];
};

}  // namespace sluice
