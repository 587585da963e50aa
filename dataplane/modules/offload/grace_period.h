// Grace periods over the PMDs, for partial offload's marks: a mark whose
// entry was cleared may name another megaflow only once every PMD has passed
// a quiescent point after the clear (and after the provider's sync), because
// a PMD may hold packets marked by the old rule between its rx burst and its
// mark lookup (the software engine even marks them inside that rx burst).
//
// GracePeriodSource is what the offload thread asks (never blocking: it holds
// its own mutex, which DataplaneControl takes too). PmdGracePeriods is the
// real one: the offload thread requests, and the thread that publishes PMD
// snapshots serves the request by publishing one and waiting until every
// running PMD acknowledged it at its quiescent point (pmd_snapshot.h), then
// completes it. Tests use a fake that completes when told.
#pragma once

#include <atomic>
#include <cstdint>

namespace sluice::offload {

class GracePeriodSource {
 public:
  virtual ~GracePeriodSource() = default;
  // Starts a grace period; the token it returns has passed once every PMD
  // has gone through a quiescent point after this call.
  virtual uint64_t request() = 0;
  virtual bool passed(uint64_t token) const = 0;
};

class PmdGracePeriods final : public GracePeriodSource {
 public:
  // Offload thread.
  uint64_t request() override { return requested_.fetch_add(1, std::memory_order_acq_rel) + 1; }
  bool passed(uint64_t token) const override { return completed_.load(std::memory_order_acquire) >= token; }

  // The snapshot publisher (one thread). The newest token requested, or 0
  // when every request is complete; read it *before* publishing, so every
  // request it covers was made before the PMDs' acknowledgements.
  uint64_t outstanding() const {
    const uint64_t r = requested_.load(std::memory_order_acquire);
    return r > completed_.load(std::memory_order_relaxed) ? r : 0;
  }
  // After every running PMD acknowledged a snapshot published after
  // outstanding() returned `token`.
  void complete(uint64_t token) { completed_.store(token, std::memory_order_release); }

 private:
  std::atomic<uint64_t> requested_{0};  // tokens handed out, ever
  std::atomic<uint64_t> completed_{0};  // every token up to this one has passed
};

}  // namespace sluice::offload
