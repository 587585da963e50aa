// A tiny per-PMD pseudo-random generator for cache insertion decisions and
// victim choice. xorshift64* (Marsaglia; Vigna's multiplier): a few cycles,
// no shared state, and a fixed seed makes tests deterministic.
// Owned by one thread (each PMD has its own instance).
#pragma once

#include <cstdint>

namespace sluice::flow {

class Prng {
 public:
  // A zero state would stay zero forever; any other seed is fine.
  explicit Prng(uint64_t seed) : state_(seed != 0 ? seed : 0x9e3779b97f4a7c15ULL) {}

  uint32_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return static_cast<uint32_t>((state_ * 0x2545f4914f6cdd1dULL) >> 32);
  }

 private:
  uint64_t state_;
};

}  // namespace sluice::flow
