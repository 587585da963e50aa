// Capped exponential backoff with jitter, for reconnecting to the API and
// to sluiced: each failure doubles the delay up to the cap, and the delay
// actually waited is drawn from [delay/2, delay] so that every node of a
// cluster that lost the API at once does not come back at the same instant.
// One per loop; not shared between threads.
#pragma once

#include <algorithm>
#include <chrono>
#include <random>

namespace sluice::agent {

class Backoff {
 public:
  using Duration = std::chrono::milliseconds;
  Backoff(Duration initial, Duration cap) : initial_(initial), cap_(cap), next_(initial), rng_(std::random_device{}()) {}

  // The delay to wait after one more failure.
  Duration next() {
    const Duration d = next_;
    next_ = std::min(cap_, next_ * 2);
    std::uniform_int_distribution<long long> pick(d.count() / 2, d.count());
    return Duration(pick(rng_));
  }
  void reset() { next_ = initial_; }

 private:
  Duration initial_, cap_, next_;
  std::mt19937_64 rng_;
};

}  // namespace sluice::agent
