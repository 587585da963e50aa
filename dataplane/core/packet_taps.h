// Control's side of packet trace and capture: arms the PMDs' taps
// (datapath/pmd_tap.h) for one session, drains their rings into the caller
// until the session has what it asked for or the caller stops it, and
// disarms them whatever happens. One trace and one capture at a time.
// API threads; a session blocks its caller (a streaming RPC's handler).
#pragma once

#include <absl/status/status.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "dataplane/datapath/pmd_context.h"
#include "dataplane/datapath/pmd_tap.h"

namespace sluice {

struct TraceSpec {
  uint16_t port = 0;
  TapFilter filter;
  uint32_t count = 1;
};

// The most packets one capture takes (a request of count 0 included): a
// capture nobody stops would otherwise copy a pod's traffic for as long as
// sluiced runs. At the largest snaplen this is about 200 MB of pcap.
inline constexpr uint32_t kCaptureMaxPackets = 100'000;

struct CaptureSpec {
  uint16_t port = 0;
  bool rx = true;
  bool tx = false;
  uint32_t count = 0;  // 0: kCaptureMaxPackets, or until stopped if sooner
  uint32_t snaplen = kCaptureSnapMax;
};

class PacketTaps {
 public:
  PacketTaps(std::vector<PmdContext*> pmds, uint64_t tsc_hz) : pmds_(std::move(pmds)), tsc_hz_(tsc_hz) {}

  // emit(pmd, record, dropped so far) for each record of this session, in
  // the order each PMD made them; returning false ends the session, as does
  // stop() returning true (asked about every millisecond while the rings
  // are empty). FailedPrecondition while another trace runs.
  using TraceEmit = std::function<bool(unsigned pmd, const TraceRecord& rec, uint64_t dropped)>;
  absl::Status trace(const TraceSpec& spec, const TraceEmit& emit, const std::function<bool()>& stop);

  // As trace; time_ns is the packet's wall-clock time (from its TSC).
  using CaptureEmit =
      std::function<bool(unsigned pmd, const CaptureSlot& slot, uint64_t time_ns, uint64_t dropped)>;
  absl::Status capture(const CaptureSpec& spec, const CaptureEmit& emit, const std::function<bool()>& stop);

 private:
  const std::vector<PmdContext*> pmds_;
  const uint64_t tsc_hz_;
  std::atomic<bool> tracing_{false};
  std::atomic<bool> capturing_{false};
  std::atomic<uint64_t> sessions_{0};
};

}  // namespace sluice
