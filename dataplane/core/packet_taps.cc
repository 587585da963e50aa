#include "dataplane/core/packet_taps.h"

#include <rte_cycles.h>

#include <chrono>
#include <limits>
#include <thread>

namespace sluice {
namespace {

// How long a session waits between looks at empty rings: records wait at
// most this long in a ring (256 trace records or 512 captured packets per
// PMD fill in about that time only at rates a tap is not meant for).
constexpr auto kPollInterval = std::chrono::milliseconds(1);

template <typename Ring>
void discard(Ring& ring) {
  while (ring.front() != nullptr) ring.pop();
}

// Clears `flag` on every exit path of a session.
struct Release {
  std::atomic<bool>& flag;
  ~Release() { flag.store(false, std::memory_order_release); }
};

}  // namespace

absl::Status PacketTaps::trace(const TraceSpec& spec, const TraceEmit& emit, const std::function<bool()>& stop) {
  bool idle = false;
  if (!tracing_.compare_exchange_strong(idle, true)) return absl::FailedPreconditionError("a trace is already running");
  Release release{tracing_};
  const uint64_t session = sessions_.fetch_add(1) + 1;
  const uint32_t count = spec.count == 0 ? 1 : spec.count;
  std::vector<uint64_t> dropped_at_start;
  for (PmdContext* pmd : pmds_) {
    PmdTap& t = pmd->tap;
    discard(t.traces);  // a previous session's leftovers
    t.trace_port.store(spec.port, std::memory_order_relaxed);
    t.filter_ipv4_src.store(spec.filter.ipv4_src, std::memory_order_relaxed);
    t.filter_ipv4_dst.store(spec.filter.ipv4_dst, std::memory_order_relaxed);
    t.filter_tp_src.store(spec.filter.tp_src, std::memory_order_relaxed);
    t.filter_tp_dst.store(spec.filter.tp_dst, std::memory_order_relaxed);
    t.filter_ip_proto.store(spec.filter.ip_proto, std::memory_order_relaxed);
    t.trace_session.store(session, std::memory_order_relaxed);
    t.trace_left.store(count, std::memory_order_relaxed);
    dropped_at_start.push_back(t.trace_dropped.read());
    t.armed.fetch_or(kTapTrace, std::memory_order_release);
  }
  uint32_t got = 0;
  bool done = false;
  auto dropped_now = [&] {
    uint64_t dropped = 0;
    for (size_t i = 0; i < pmds_.size(); ++i) dropped += pmds_[i]->tap.trace_dropped.read() - dropped_at_start[i];
    return dropped;
  };
  while (!done) {
    bool any = false;
    for (size_t i = 0; i < pmds_.size() && !done; ++i) {
      PmdTap& t = pmds_[i]->tap;
      while (const TraceRecord* rec = t.traces.front()) {
        any = true;
        if (rec->session == session && got < count) {
          ++got;
          if (!emit(static_cast<unsigned>(i), *rec, dropped_now())) done = true;
        }
        t.traces.pop();
        if (done) break;
      }
    }
    if (got + dropped_now() >= count || (!any && stop())) done = true;
    if (!done && !any) std::this_thread::sleep_for(kPollInterval);
  }
  for (PmdContext* pmd : pmds_) pmd->tap.armed.fetch_and(~kTapTrace, std::memory_order_release);
  return absl::OkStatus();
}

absl::Status PacketTaps::capture(const CaptureSpec& spec, const CaptureEmit& emit,
                                 const std::function<bool()>& stop) {
  bool idle = false;
  if (!capturing_.compare_exchange_strong(idle, true))
    return absl::FailedPreconditionError("a capture is already running");
  Release release{capturing_};
  const uint64_t session = sessions_.fetch_add(1) + 1;
  const uint32_t count = spec.count == 0 ? kCaptureMaxPackets : std::min(spec.count, kCaptureMaxPackets);
  const uint32_t bits = (spec.rx ? kTapCaptureRx : 0) | (spec.tx ? kTapCaptureTx : 0);
  // The TSC of a packet becomes wall-clock time relative to this moment.
  const uint64_t tsc0 = rte_rdtsc();
  const auto wall0 = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  auto time_ns = [&](uint64_t tsc) {
    const double delta = static_cast<double>(static_cast<int64_t>(tsc - tsc0)) * 1e9 / static_cast<double>(tsc_hz_);
    return static_cast<uint64_t>(static_cast<double>(wall0) + delta);
  };
  std::vector<uint64_t> dropped_at_start;
  for (PmdContext* pmd : pmds_) {
    PmdTap& t = pmd->tap;
    discard(t.captures);
    t.capture_port.store(spec.port, std::memory_order_relaxed);
    t.snaplen.store(std::min(spec.snaplen == 0 ? kCaptureSnapMax : spec.snaplen, kCaptureSnapMax),
                    std::memory_order_relaxed);
    t.capture_session.store(session, std::memory_order_relaxed);
    t.capture_left.store(count, std::memory_order_relaxed);
    dropped_at_start.push_back(t.capture_dropped.read());
    t.armed.fetch_or(bits, std::memory_order_release);
  }
  uint64_t got = 0;
  bool done = false;
  auto dropped_now = [&] {
    uint64_t dropped = 0;
    for (size_t i = 0; i < pmds_.size(); ++i) dropped += pmds_[i]->tap.capture_dropped.read() - dropped_at_start[i];
    return dropped;
  };
  while (!done) {
    bool any = false;
    for (size_t i = 0; i < pmds_.size() && !done; ++i) {
      PmdTap& t = pmds_[i]->tap;
      while (const CaptureSlot* slot = t.captures.front()) {
        any = true;
        if (slot->session == session && got < count) {
          ++got;
          if (!emit(static_cast<unsigned>(i), *slot, time_ns(slot->tsc), dropped_now())) done = true;
        }
        t.captures.pop();
        if (done) break;
      }
    }
    if (got + dropped_now() >= count || (!any && stop())) done = true;
    if (!done && !any) std::this_thread::sleep_for(kPollInterval);
  }
  for (PmdContext* pmd : pmds_) pmd->tap.armed.fetch_and(~(kTapCaptureRx | kTapCaptureTx), std::memory_order_release);
  return absl::OkStatus();
}

}  // namespace sluice
