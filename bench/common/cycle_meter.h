// Cycles per packet for Google Benchmarks on this shared 2-core machine:
// the thread's CPU time converted to TSC cycles ("cyc/pkt", the figure to
// compare: it excludes time the thread was preempted) and wall-clock TSC
// ("tsc/pkt", includes it). Used by bench/flow and bench/offload.
#pragma once

#include <benchmark/benchmark.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdint>
#include <ctime>

namespace sluice::bench {

// TSC ticks per nanosecond, measured once against the steady clock.
inline double tscPerNs() {
  static const double ratio = [] {
    const auto c0 = std::chrono::steady_clock::now();
    const uint64_t t0 = __rdtsc();
    while (std::chrono::steady_clock::now() - c0 < std::chrono::milliseconds(50)) {
    }
    const uint64_t t1 = __rdtsc();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0).count();
    return static_cast<double>(t1 - t0) / static_cast<double>(ns);
  }();
  return ratio;
}

inline uint64_t threadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// Cycles per packet two ways: "tsc/pkt" is wall-clock TSC (includes time the
// thread was preempted — this machine is shared), "cyc/pkt" is the thread's
// CPU time in TSC cycles (excludes it; the figure to compare).
class CycleMeter {
 public:
  CycleMeter() : ratio_(tscPerNs()), tsc0_(__rdtsc()), cpu0_(threadCpuNs()) {}
  void report(benchmark::State& state, uint64_t packets) const {
    const uint64_t tsc = __rdtsc() - tsc0_;
    const uint64_t cpu = threadCpuNs() - cpu0_;
    state.SetItemsProcessed(static_cast<int64_t>(packets));
    if (packets == 0) return;
    const auto p = static_cast<double>(packets);
    state.counters["tsc/pkt"] = static_cast<double>(tsc) / p;
    state.counters["cyc/pkt"] = static_cast<double>(cpu) * ratio_ / p;
  }

 private:
  double ratio_;
  uint64_t tsc0_;
  uint64_t cpu0_;
};

}  // namespace sluice::bench
